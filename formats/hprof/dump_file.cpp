#include "formats/hprof/dump_file.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

#include "base/atomic_file.h"
#include "base/fd_io.h"
#include "base/unique_fd.h"

namespace heapd {
inline namespace hprof {
namespace {

// Inflates every gzip member of in into fd; a cut last member keeps what it gave and warns. More
// than max bytes out is an error, found before they are written.
result<void> inflate_to(std::span<const std::byte> in, int fd, const std::string& name, std::string& warning,
                        std::optional<std::uint64_t> max) {
    std::uint64_t written = 0;
    z_stream z{};
    if (inflateInit2(&z, 15 + 16) != Z_OK) return fail(error_code::io, "cannot start inflating " + name);
    std::vector<unsigned char> out(1 << 20);
    std::size_t pos = 0;
    bool in_member = true;  // inside a member that has not reached its end yet
    result<void> outcome{};
    while (pos < in.size()) {
        z.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data() + pos));
        uInt chunk = static_cast<uInt>(std::min<std::size_t>(in.size() - pos, 1u << 30));
        z.avail_in = chunk;
        z.next_out = out.data();
        z.avail_out = static_cast<uInt>(out.size());
        int rc = inflate(&z, Z_NO_FLUSH);
        pos += chunk - z.avail_in;
        std::size_t produced = out.size() - z.avail_out;
        written += produced;
        if (max && written > *max) {
            outcome = fail(
                error_code::unsupported,
                name + " inflates to more than " + std::to_string(*max) + " bytes, the room it is given: refused", pos);
            break;
        }
        if (produced > 0 && !write_all(fd, out.data(), produced)) {
            outcome = fail_errno("cannot write the inflated copy of", name);
            break;
        }
        if (rc == Z_STREAM_END) {
            in_member = false;
            // The next member, if any (skipping zero padding some writers leave).
            while (pos < in.size() && in[pos] == std::byte{0}) ++pos;
            if (pos < in.size()) {
                inflateReset(&z);
                in_member = true;
            }
            continue;
        }
        if (rc == Z_BUF_ERROR && z.avail_in == 0 && pos >= in.size()) break;
        if (rc != Z_OK) {
            outcome = fail(error_code::bad_value,
                           "gzip data of " + name + " is damaged: " + (z.msg ? z.msg : "inflate failed"), pos);
            break;
        }
    }
    inflateEnd(&z);
    if (outcome && in_member)
        warning = "gzip stream of " + name + " ends before its last member does: the dump was cut short";
    return outcome;
}

}  // namespace

int unlinked_temp_file(const std::string& dir) {
    int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
    std::string tmpl = dir + "/.heapd-inflate-XXXXXX";
    fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
    if (fd >= 0) ::unlink(tmpl.c_str());
    return fd;
}

bool is_gzip(std::span<const std::byte> bytes) {
    return bytes.size() >= 2 && bytes[0] == std::byte{0x1f} && bytes[1] == std::byte{0x8b};
}

result<dump_file> dump_file::open(const std::string& path, const dump_open_options& options) {
    unique_fd fd(::open(path.c_str(), O_RDONLY | O_NOCTTY | O_CLOEXEC));
    if (!fd) return fail_errno("cannot open", path);
    dump_open_options o = options;
    if (o.inflate_dir.empty()) o.inflate_dir = parent_of(path);
    return from_fd(fd.get(), path, o);
}

result<dump_file> dump_file::from_fd(int fd, const std::string& name, const dump_open_options& options) {
    auto map = mapped_file::from_fd(fd, name);
    if (!map) return std::unexpected(map.error());
    dump_file d;
    d.name_ = name;
    if (!is_gzip(map->bytes())) {
        d.map_ = std::move(*map);
        return d;
    }
    d.compressed_ = true;
    d.compressed_bytes_ = map->size();
    std::vector<std::string> dirs;
    if (!options.inflate_dir.empty()) dirs.push_back(options.inflate_dir);
    if (const char* t = std::getenv("TMPDIR"); t != nullptr && *t != '\0') dirs.emplace_back(t);
    dirs.emplace_back("/tmp");
    unique_fd out;
    if (options.inflate_fd >= 0) {
        out.reset(::fcntl(options.inflate_fd, F_DUPFD_CLOEXEC, 0));
    } else {
        for (const std::string& dir : dirs)
            if (out.reset(unlinked_temp_file(dir)); out) break;
    }
    if (!out) return fail_errno("cannot create a temporary file to inflate", name);
    map->advise_sequential();
    if (auto r = inflate_to(map->bytes(), out.get(), name, d.inflate_warning_, options.max_inflated_bytes); !r)
        return std::unexpected(r.error());
    auto inflated = mapped_file::from_fd(out.get(), name + " (inflated)");
    if (!inflated) return std::unexpected(inflated.error());
    d.map_ = std::move(*inflated);
    return d;
}

}  // namespace hprof
}  // namespace heapd
