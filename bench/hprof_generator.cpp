// hprof_generator: writes a synthetic heap dump of a given size for the benchmarks
// (bench/heap_generator.h says what it holds), and prints what it wrote.
//
//   hprof_generator [--size SIZE] [--loaders N] [--round-objects N] [--seed N] [--containers] OUT.hprof
//
// It prints a summary line, then "holder ID KIND LOADER RETAINED" for each Holder class's list of
// containers (and with --containers, "container ID KIND LOADER RETAINED" for each container): the
// bytes each retains, by HotSpot 17's sizes, to compare with what an analyzer says.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "daemon/config/config_values.h"
#include "heap_generator.h"

namespace {

int usage() {
    std::fprintf(stderr,
                 "usage: hprof_generator [--size SIZE (default 64M)] [--loaders N (default 4)] [--round-objects N "
                 "(default 1048576)] [--seed N] [--containers] OUT.hprof\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    heapd::bench::generator_options o;
    bool containers = false;
    const char* out = nullptr;
    for (int i = 1; i < argc; ++i) {
        std::string_view a = argv[i];
        auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
        if (a == "--size") {
            const char* v = value();
            auto size = v ? heapd::daemon::parse_size(v) : std::nullopt;
            if (!size) return usage();
            o.target_bytes = *size;
        } else if (a == "--loaders" || a == "--round-objects" || a == "--seed") {
            const char* v = value();
            if (!v) return usage();
            unsigned long long n = std::strtoull(v, nullptr, 10);
            if (a == "--loaders") o.loaders = static_cast<unsigned>(n);
            if (a == "--round-objects") o.round_objects = static_cast<std::uint32_t>(n);
            if (a == "--seed") o.seed = n;
        } else if (a == "--containers") {
            containers = true;
        } else if (!a.starts_with("-") && out == nullptr) {
            out = argv[i];
        } else {
            return usage();
        }
    }
    if (out == nullptr) return usage();
    int fd = ::open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        std::fprintf(stderr, "hprof_generator: cannot create %s: %s\n", out, std::strerror(errno));
        return 1;
    }
    const auto start = std::chrono::steady_clock::now();
    auto heap = heapd::bench::generate_heap(fd, o);
    if (heap && ::fsync(fd) != 0) heap = std::unexpected(std::string("cannot write the dump"));
    ::close(fd);
    if (!heap) {
        std::fprintf(stderr, "hprof_generator: %s: %s\n", out, heap.error().c_str());
        return 1;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf(
        "wrote %s: %llu bytes, %llu objects (%.1f bytes each), %u classes, %u loaders x %u rounds, "
        "in %.1f s (%.0f MB/s)\n",
        out, static_cast<unsigned long long>(heap->bytes), static_cast<unsigned long long>(heap->objects),
        static_cast<double>(heap->bytes) / static_cast<double>(heap->objects), heap->classes, o.loaders, heap->rounds,
        seconds, static_cast<double>(heap->bytes) / 1e6 / seconds);
    // Each container, and each Holder's list of them, with the bytes it retains.
    auto print = [](const char* what, const heapd::bench::generated_container& c) {
        std::printf("%s %llu %s %u %llu\n", what, static_cast<unsigned long long>(c.id), c.kind.c_str(), c.loader,
                    static_cast<unsigned long long>(c.retained));
    };
    if (containers)
        for (const auto& c : heap->containers) print("container", c);
    for (const auto& c : heap->holders) print("holder", c);
    return 0;
}
