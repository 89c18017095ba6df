#include "daemon/oom/spool.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>

#include "base/atomic_file.h"

namespace heapd::daemon {
namespace {

constexpr std::size_t max_spool_bytes = 64 * 1024;

}  // namespace

std::string default_spool_dir() {
    const char* env = std::getenv("HEAPD_SPOOL");
    return env != nullptr && *env != '\0' ? env : "/var/spool/heapd";
}

result<std::string> spool_request(const std::string& dir, const wire::json& args) {
    std::random_device random;
    const std::string name =
        "dump-" + std::to_string(static_cast<long long>(std::time(nullptr))) + "-" + std::to_string(random()) + ".json";
    // Written under a ".tmp-" name the daemon skips, then renamed: it never takes half a request.
    const std::string path = dir + "/" + name;
    auto file = atomic_file::create(path, 0600);
    if (!file) return std::unexpected(file.error());
    if (auto written = file->write(args.dump() + "\n"); !written) return std::unexpected(written.error());
    if (auto committed = file->commit(); !committed) return std::unexpected(committed.error());
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

std::vector<spooled_request> read_spool(const std::string& dir, std::vector<std::string>& problems,
                                        std::size_t max_requests) {
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
        if (names.size() >= max_requests) break;  // the rest at the next pass
    }
    ::closedir(d);
    for (const std::string& name : names) {
        const std::string path = dir + "/" + name;
        int fd = ::open(path.c_str(), O_RDONLY | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        struct stat st {};
        std::string text;
        bool usable = fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                      static_cast<std::size_t>(st.st_size) <= max_spool_bytes;
        // A file with another name elsewhere (a hard link, which fs.protected_hardlinks allows to
        // anyone who may write the file) is not its owner's request: its owner did not put it here.
        if (usable && st.st_nlink != 1) {
            if (fd >= 0) ::close(fd);
            ::unlink(path.c_str());
            problems.push_back(path + ": a hard link (" + std::to_string(st.st_nlink) +
                               " names) to a file that may be another user's, not a request; the link removed, "
                               "the file left as it is");
            continue;
        }
        if (usable) {
            text.resize(static_cast<std::size_t>(st.st_size));
            usable = ::pread(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size());
        }
        if (fd >= 0) ::close(fd);
        auto args = usable ? wire::json::parse(text, nullptr, false) : wire::json();
        if (!usable || args.is_discarded() || !args.is_object()) {
            ::unlink(path.c_str());
            problems.push_back(path + ": not a spooled request; removed");
            continue;
        }
        out.push_back({path, st.st_uid, st.st_gid, std::move(args)});
    }
    return out;
}

void remove_spooled(const spooled_request& request) {
    ::unlink(request.path.c_str());
    sync_dir(parent_of(request.path));
}

std::string spooled_request_id(const spooled_request& request) {
    auto id = request.args.find("request_id");
    if (id != request.args.end() && id->is_string()) return id->get<std::string>();
    // A request of a hook before ids: "spool-" and its file's name without ".json" (time and a
    // random number), or nothing usable when someone else named it.
    std::string name = request.path.substr(request.path.rfind('/') + 1);
    if (name.ends_with(".json")) name.resize(name.size() - 5);
    return "spool-" + name;
}

}  // namespace heapd::daemon
