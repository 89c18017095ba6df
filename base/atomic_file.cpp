#include "base/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <utility>

#include "base/fd_io.h"
#include "base/unique_fd.h"

namespace heapd {

std::string parent_of(const std::string& path) {
    auto slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

namespace {

std::string base_of(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

void sync_dir(const std::string& dir) {
    unique_fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd) ::fsync(fd.get());
}

result<void> apply_access(const std::string& path, bool is_dir, const file_access& access) {
    // Through a descriptor opened without following a link (and without blocking on a FIFO): a
    // link put where a file of ours should be is refused, never followed to what it names.
    const int flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (is_dir ? O_DIRECTORY : 0);
    unique_fd fd(::open(path.c_str(), flags));
    if (!fd) return fail_errno("cannot open", path);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return fail_errno("cannot stat", path);
    if (!is_dir && !S_ISREG(st.st_mode)) return fail(error_code::io, path + " is not a regular file");
    if (::fchmod(fd.get(), is_dir ? access.dir_mode : access.file_mode) != 0) return fail_errno("cannot chmod", path);
    if (access.chown && ::fchown(fd.get(), 0, access.group) != 0) return fail_errno("cannot chown", path);
    return {};
}

result<void> make_dir(const std::string& path, const file_access& access) {
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec) return fail(error_code::io, "cannot create " + path + ": " + ec.message());
    return apply_access(path, true, access);
}

atomic_file::atomic_file(std::string path, std::string temp, unique_fd fd)
    : path_(std::move(path)), temp_(std::move(temp)), fd_(std::move(fd)) {}

atomic_file::atomic_file(atomic_file&& other) noexcept
    : path_(std::move(other.path_)),
      temp_(std::move(other.temp_)),
      fd_(std::move(other.fd_)),
      done_(std::exchange(other.done_, true)) {}

atomic_file::~atomic_file() {
    if (!done_) ::unlink(temp_.c_str());
}

result<atomic_file> atomic_file::create(const std::string& path, mode_t mode) {
    std::string temp = parent_of(path) + "/" + std::string(temp_prefix) + base_of(path) + "-XXXXXX";
    unique_fd fd(::mkostemp(temp.data(), O_CLOEXEC));
    if (!fd) return fail_errno("cannot create a temporary file for", path);
    atomic_file file(path, std::move(temp), std::move(fd));
    if (::fchmod(file.fd(), mode) != 0) return fail_errno("cannot chmod", file.temp_);
    return file;
}

result<void> atomic_file::write(std::string_view bytes) {
    if (!write_all(fd_.get(), bytes)) return fail_errno("cannot write", temp_);
    return {};
}

result<void> atomic_file::commit() {
    if (::fsync(fd_.get()) != 0) return fail_errno("cannot sync", temp_);
    fd_.reset();
    if (::rename(temp_.c_str(), path_.c_str()) != 0) return fail_errno("cannot rename a temporary file to", path_);
    done_ = true;
    sync_dir(parent_of(path_));
    return {};
}

result<void> write_file_atomic(const std::string& path, std::string_view content, const file_access& access) {
    auto file = atomic_file::create(path, access.file_mode);
    if (!file) return std::unexpected(file.error());
    if (access.chown && ::fchown(file->fd(), 0, access.group) != 0)
        return fail_errno("cannot chown", file->temp_path());
    if (auto w = file->write(content); !w) return w;
    return file->commit();
}

result<std::string> read_file(const std::string& path, std::size_t max_bytes) {
    unique_fd fd(::open(path.c_str(), O_RDONLY | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd) return fail_errno("cannot open", path);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return fail_errno("cannot stat", path);
    if (!S_ISREG(st.st_mode)) return fail(error_code::io, path + " is not a regular file");
    if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
        return fail(error_code::unsupported, path + " is larger than " + std::to_string(max_bytes) + " bytes");
    auto out = read_to_end(fd.get(), max_bytes);
    if (!out) return fail_errno("cannot read", path);
    return std::move(*out);
}

}  // namespace heapd
