#include "attach/owner_removal.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace heapd::attach {

bool remove_as_owner(int dir_fd, const std::string& name, uid_t uid, gid_t gid) {
    if (dir_fd < 0 || name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") return false;
    const char* n = name.c_str();  // made before fork: the child only makes system calls
    const pid_t child = ::fork();
    if (child < 0) return false;
    if (child == 0) {
        if (::setgroups(0, nullptr) != 0 || ::setresgid(gid, gid, gid) != 0 || ::setresuid(uid, uid, uid) != 0)
            ::_exit(2);
        ::_exit(::unlinkat(dir_fd, n, 0) == 0 ? 0 : 1);
    }
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace heapd::attach
