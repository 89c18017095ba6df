// Writes the hsperfdata fuzzer's seed corpus: synthetic files shaped like those of G1 and
// Parallel JVMs in both byte orders, cut in the middle, and still being created.
// Usage: heapd_hsperf_seeds OUT_DIR
#include <cstdio>
#include <filesystem>
#include <string>

#include "support/hsperf_builder.h"

namespace {

namespace fs = std::filesystem;
using heapd::test::hsperf_builder;

void add_heap(hsperf_builder& b, bool g1) {
    b.add_string("sun.rt.javaCommand", "com.example.Main --port 8080")
        .add_string("java.property.java.vm.version", "17.0.21+9")
        .add_string("java.rt.vmArgs", "-Xmx1g -XX:+HeapDumpOnOutOfMemoryError -XX:OnOutOfMemoryError=kill -9 %p", 256)
        .add_string("java.rt.vmFlags", "+ExitOnOutOfMemoryError HeapDumpPath=/d")
        .add_string("sun.gc.policy.name", g1 ? "GarbageFirst" : "ParScav:MSC")
        .add_string("sun.gc.lastCause", "Allocation Failure", 64, hsperf_builder::variable)
        .add_long("sun.os.hrt.frequency", 1000000000, hsperf_builder::units_hertz, hsperf_builder::constant)
        .add_long("sun.os.hrt.ticks", 5000000000, hsperf_builder::units_ticks);
    for (int g = 0; g < 2; ++g) {
        const std::string p = "sun.gc.generation." + std::to_string(g) + ".";
        b.add_string(p + "name", g == 0 ? "young" : "old")
            .add_long(p + "capacity", 1 << 24)
            .add_long(p + "maxCapacity", 1 << 28);
        for (int s = 0; s < (g == 0 ? 3 : 1); ++s) {
            const std::string q = p + "space." + std::to_string(s) + ".";
            b.add_string(q + "name", "space")
                .add_long(q + "used", 1000 * (s + 1))
                .add_long(q + "capacity", 1 << 22)
                .add_long(q + "maxCapacity", 1 << 28);
        }
    }
    for (int c = 0; c < 3; ++c) {
        const std::string p = "sun.gc.collector." + std::to_string(c) + ".";
        b.add_string(p + "name", "collector").add_long(p + "invocations", c).add_long(p + "time", 1000 * c);
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: heapd_hsperf_seeds OUT_DIR\n");
        return 1;
    }
    const fs::path out = argv[1];
    fs::create_directories(out);
    int n = 0;
    auto save = [&](const hsperf_builder& b, std::size_t keep) {
        auto bytes = b.build();
        if (keep != 0 && keep < bytes.size()) bytes.resize(keep);
        FILE* f = std::fopen((out / ("seed-" + std::to_string(n++))).c_str(), "wb");
        if (f == nullptr) return false;
        std::fwrite(bytes.data(), 1, bytes.size(), f);
        return std::fclose(f) == 0;
    };
    bool ok = true;
    for (bool le : {true, false}) {
        for (bool g1 : {true, false}) {
            hsperf_builder b(le, 0);  // no padding: every byte is structure
            add_heap(b, g1);
            ok &= save(b, 0);
            ok &= save(b, b.used() / 2);
            hsperf_builder starting(le, 0);
            starting.accessible(false);
            add_heap(starting, g1);
            ok &= save(starting, 0);
        }
    }
    return ok ? 0 : 1;
}
