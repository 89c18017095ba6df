#include "daemon/upload/stripped_dump.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "base/atomic_file.h"
#include "base/fd_io.h"
#include "base/unique_fd.h"
#include "formats/hprof/dump_file.h"
#include "formats/hprof/strip.h"

namespace heapd::daemon {

result<void> write_stripped_gzip(const std::string& dump_path, const std::string& out_path,
                                 const std::string& work_dir) {
    dump_open_options options;
    options.inflate_dir = work_dir;
    auto dump = dump_file::open(dump_path, options);
    if (!dump) return std::unexpected(dump.error());
    auto out = atomic_file::create(out_path, 0600);
    if (!out) return std::unexpected(out.error());
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0) return fail(error_code::io, std::string("pipe: ") + std::strerror(errno));
    unique_fd read_end(ends[0]), write_end(ends[1]);

    result<strip_stats> stripped = fail(error_code::io, "not run");
    std::thread stripper([&] {
        stripped = strip_dump(dump->bytes(), write_end.get(), {});
        write_end.reset();  // end of input for the compressor
    });

    z_stream z{};
    // 31: a gzip header and trailer; level 6, zlib's default: zeroed arrays cost almost nothing.
    if (deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        read_end.reset();  // the stripper's writes fail, and it ends
        stripper.join();
        return fail(error_code::io, "zlib: cannot start compressing");
    }
    std::vector<unsigned char> in(1u << 20), compressed(1u << 20);
    result<void> failed{};
    for (bool end = false; !end && failed;) {
        ssize_t n;
        do n = ::read(read_end.get(), in.data(), in.size());
        while (n < 0 && errno == EINTR);
        if (n < 0) {
            failed = fail(error_code::io, std::string("reading the stripped dump: ") + std::strerror(errno));
            break;
        }
        end = n == 0;
        z.next_in = in.data();
        z.avail_in = static_cast<uInt>(n);
        do {
            z.next_out = compressed.data();
            z.avail_out = static_cast<uInt>(compressed.size());
            deflate(&z, end ? Z_FINISH : Z_NO_FLUSH);
            const std::size_t have = compressed.size() - z.avail_out;
            if (have > 0 && !write_all(out->fd(), compressed.data(), have))
                failed = fail(error_code::io, "cannot write " + out_path + ": " + std::strerror(errno));
        } while (failed && z.avail_out == 0);
    }
    deflateEnd(&z);
    read_end.reset();
    stripper.join();
    if (!failed) return failed;
    if (!stripped) return std::unexpected(stripped.error());
    return out->commit();
}

}  // namespace heapd::daemon
