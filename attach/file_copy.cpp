#include "attach/file_copy.h"

#include <fcntl.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/unique_fd.h"

namespace heapd::attach {

result<void> copy_to_new_file(int in, std::uint64_t size, const std::string& path) {
    unique_fd out(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!out) return fail(error_code::io, "cannot create " + path + ": " + std::strerror(errno));
    off_t offset = 0;
    int error = 0;
    bool plain = false;  // copy_file_range and sendfile refused: reads and writes
    while (static_cast<std::uint64_t>(offset) < size && error == 0) {
        const std::size_t chunk = static_cast<std::size_t>(std::min<std::uint64_t>(size - offset, 1u << 30));
        ssize_t n = -1;
        if (!plain) {
            n = ::copy_file_range(in, &offset, out.get(), nullptr, chunk, 0);
            if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP))
                n = ::sendfile(out.get(), in, &offset, chunk);
            if (n < 0 && (errno == EINVAL || errno == ENOSYS)) plain = true;
        }
        if (plain) {
            char buffer[1 << 16];
            n = ::pread(in, buffer, std::min(chunk, sizeof buffer), offset);
            if (n > 0 && ::write(out.get(), buffer, static_cast<std::size_t>(n)) != n) n = -1;
            if (n > 0) offset += n;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0)
            error = errno;
        else if (n == 0)
            error = EIO;  // the file shrank under us
    }
    if (::close(out.release()) != 0 && error == 0) error = errno;
    if (error != 0) {
        ::unlink(path.c_str());
        return fail(error_code::io, "cannot copy the dump to " + path + ": " + std::strerror(error));
    }
    return {};
}

std::optional<std::string> handed_over_refusal(const struct stat& st, uid_t jvm_uid, std::uint64_t max_bytes) {
    if (!S_ISREG(st.st_mode)) return "is not a regular file";
    if (st.st_uid != jvm_uid)
        return "is owned by uid " + std::to_string(st.st_uid) + ", not by the JVM's uid " + std::to_string(jvm_uid);
    if (st.st_nlink != 0) return "still has " + std::to_string(st.st_nlink) + " other name(s) (a hard link)";
    if (max_bytes != 0 && static_cast<std::uint64_t>(st.st_size) > max_bytes)
        return "is " + std::to_string(st.st_size) + " bytes, more than the " + std::to_string(max_bytes) + " allowed";
    return std::nullopt;
}

}  // namespace heapd::attach
