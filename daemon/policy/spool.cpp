#include "daemon/policy/spool.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>

namespace heapd::daemon {
namespace {

constexpr std::size_t max_spool_bytes = 64 * 1024;

bool write_all(int fd, const std::string& text) {
    for (std::size_t at = 0; at < text.size();) {
        ssize_t n = ::write(fd, text.data() + at, text.size() - at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        at += static_cast<std::size_t>(n);
    }
    return true;
}

} // namespace

std::string default_spool_dir() {
    const char* env = std::getenv("HEAPD_SPOOL");
    return env != nullptr && *env != '\0' ? env : "/var/spool/heapd";
}

result<std::string> spool_request(const std::string& dir, const wire::json& args) {
    std::random_device random;
    const std::string name = "dump-" + std::to_string(static_cast<long long>(std::time(nullptr))) + "-" +
                             std::to_string(random()) + ".json";
    const std::string temp = dir + "/.tmp-" + name, path = dir + "/" + name;
    int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return fail(error_code::io, "cannot create " + temp + ": " + std::strerror(errno));
    const bool written = write_all(fd, args.dump() + "\n");
    const int e = written ? 0 : errno;
    if (::close(fd) != 0 || !written) {
        ::unlink(temp.c_str());
        return fail(error_code::io, "cannot write " + temp + ": " + std::strerror(e != 0 ? e : EIO));
    }
    if (::rename(temp.c_str(), path.c_str()) != 0) {
        const int re = errno;
        ::unlink(temp.c_str());
        return fail(error_code::io, "cannot rename " + temp + ": " + std::strerror(re));
    }
    return path;
}

result<void> make_spool_dir(const std::string& dir) {
    if (::mkdir(dir.c_str(), 01733) != 0 && errno != EEXIST)
        return fail(error_code::io, "cannot create " + dir + ": " + std::strerror(errno));
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return fail(error_code::io, dir + " is not a directory");
    if (st.st_uid == ::geteuid() && (st.st_mode & 07777) != 01733 && ::chmod(dir.c_str(), 01733) != 0)
        return fail(error_code::io, "cannot chmod " + dir + ": " + std::strerror(errno));
    return {};
}

std::vector<spooled_request> take_spool(const std::string& dir, std::vector<std::string>& problems) {
    std::vector<spooled_request> out;
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) {
        if (errno != ENOENT) problems.push_back("cannot read " + dir + ": " + std::strerror(errno));
        return out;
    }
    std::vector<std::string> names;
    while (dirent* e = ::readdir(d)) {
        std::string name = e->d_name;
        if (name == "." || name == ".." || name.starts_with(".tmp-")) continue;  // being written
        names.push_back(std::move(name));
    }
    ::closedir(d);
    for (const std::string& name : names) {
        const std::string path = dir + "/" + name;
        int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        struct stat st {};
        std::string text;
        bool usable = fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                      static_cast<std::size_t>(st.st_size) <= max_spool_bytes;
        if (usable) {
            text.resize(static_cast<std::size_t>(st.st_size));
            usable = ::pread(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size());
        }
        if (fd >= 0) ::close(fd);
        ::unlink(path.c_str());
        auto args = usable ? wire::json::parse(text, nullptr, false) : wire::json();
        if (!usable || args.is_discarded() || !args.is_object()) {
            problems.push_back(path + ": not a spooled request; removed");
            continue;
        }
        out.push_back({path, st.st_uid, st.st_gid, std::move(args)});
    }
    return out;
}

} // namespace heapd::daemon
