#include "attach/owner_files.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "base/child_call.h"
#include "base/unix_socket.h"

namespace heapd::attach {
namespace {

// How long a child may take: an open on a hung network file system must not hold the daemon.
constexpr std::chrono::milliseconds child_limit{5000};

// The child's answer to open_as_owner: one int, the errno of what failed (0: the descriptor rides along).
enum : int { not_regular = -1 };

struct removal {
    int dir_fd;
    const char* name;
    uid_t uid;
    gid_t gid;
};

struct path_removal {
    const char* path;
    uid_t uid;
    gid_t gid;
    std::uint64_t dev, ino;
};

struct opening {
    const char* path;
    uid_t uid;
    gid_t gid;
    bool remove_name;
};

// Takes uid and gid for good, without supplementary groups; a process that is not root may only
// stay who it is.
bool become(uid_t uid, gid_t gid) {
    if (::geteuid() != 0) return ::geteuid() == uid;
    return ::setgroups(0, nullptr) == 0 && ::setresgid(gid, gid, gid) == 0 && ::setresuid(uid, uid, uid) == 0;
}

int remove_body(int socket, const void* context) {
    const auto* r = static_cast<const removal*>(context);
    close_all_but(socket, r->dir_fd);
    if (!become(r->uid, r->gid)) return 2;
    return ::unlinkat(r->dir_fd, r->name, 0) == 0 ? 0 : 1;
}

int remove_path_body(int socket, const void* context) {
    const auto* r = static_cast<const path_removal*>(context);
    close_all_but(socket);
    if (!become(r->uid, r->gid)) return 2;
    // The directory resolved with the writer's rights, the name looked at without following it.
    const char* slash = std::strrchr(r->path, '/');
    const std::string dir(r->path, slash == r->path ? 1 : static_cast<std::size_t>(slash - r->path));
    const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st {};
    if (dir_fd < 0 || ::fstatat(dir_fd, slash + 1, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
        st.st_dev != r->dev || st.st_ino != r->ino)
        return 1;
    // Root (a hook run as root) removes another user's file from a sticky /tmp as its owner.
    if (::geteuid() == 0 && st.st_uid != 0 && !become(st.st_uid, st.st_gid)) return 2;
    return ::unlinkat(dir_fd, slash + 1, 0) == 0 ? 0 : 1;
}

int open_body(int socket, const void* context) {
    const auto* o = static_cast<const opening*>(context);
    close_all_but(socket);
    int answer = 0;
    int fd = -1;
    if (!become(o->uid, o->gid)) {
        answer = EPERM;
    } else {
        fd = ::open(o->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        struct stat st {};
        if (fd < 0)
            answer = errno;
        else if (::fstat(fd, &st) != 0)
            answer = errno;
        else if (!S_ISREG(st.st_mode))
            answer = not_regular;
        if (answer == 0 && o->remove_name) ::unlink(o->path);
    }
    send_with_fd(socket, &answer, sizeof answer, answer == 0 ? fd : -1);
    return 0;
}

}  // namespace

bool remove_as_owner(int dir_fd, const std::string& name, uid_t uid, gid_t gid) {
    if (dir_fd < 0 || name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") return false;
    const removal r{dir_fd, name.c_str(), uid, gid};
    auto done = call_in_child(remove_body, &r, child_limit);
    return done && done->exit_code == 0;
}

bool remove_path_as_owner(const std::string& path, uid_t uid, gid_t gid, std::uint64_t dev, std::uint64_t ino) {
    if (path.size() < 2 || path.front() != '/' || path.back() == '/' || ino == 0) return false;
    const path_removal r{path.c_str(), uid, gid, dev, ino};
    auto done = call_in_child(remove_path_body, &r, child_limit);
    return done && done->exit_code == 0;
}

result<unique_fd> open_as_owner(const std::string& path, uid_t uid, gid_t gid, bool remove_name) {
    if (path.empty() || path.front() != '/') return fail(error_code::bad_value, path + " is not an absolute path");
    const opening o{path.c_str(), uid, gid, remove_name};
    auto done = call_in_child(open_body, &o, child_limit);
    if (!done) return std::unexpected(done.error());
    int answer = EIO;
    if (done->bytes.size() == sizeof answer) std::memcpy(&answer, done->bytes.data(), sizeof answer);
    const std::string as = " as uid " + std::to_string(uid);
    if (answer == 0 && done->fd) return std::move(done->fd);
    if (answer == not_regular) return fail(error_code::bad_value, path + " is not a regular file");
    if (answer == EACCES || answer == EPERM)
        return fail(error_code::permission_denied, "cannot open " + path + as + ": " + std::strerror(answer));
    if (answer == ENOENT) return fail(error_code::not_found, path + " does not exist" + as);
    if (answer == ELOOP) return fail(error_code::bad_value, path + " is a symbolic link: not followed");
    return fail(error_code::io, "cannot open " + path + as + ": " + std::strerror(answer == 0 ? EIO : answer));
}

}  // namespace heapd::attach
