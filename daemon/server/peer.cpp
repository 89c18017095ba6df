#include "daemon/server/peer.h"

#include <grp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

namespace heapd::daemon {

result<peer_credentials> read_peer(int socket_fd, std::optional<gid_t> admin_group) {
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(socket_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return fail_errno("cannot read the credentials of", "a client");
    peer_credentials p;
    p.pid = cred.pid;
    p.uid = cred.uid;
    p.gid = cred.gid;
    if (auto ns = attach::pid_namespace_of(cred.pid)) p.pid_ns = *ns;
    std::vector<gid_t> groups(64);
    for (int attempt = 0; attempt < 4; ++attempt) {
        socklen_t glen = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
        if (::getsockopt(socket_fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &glen) == 0) {
            groups.resize(glen / sizeof(gid_t));
            p.groups = std::move(groups);
            break;
        }
        if (errno != ERANGE) break;  // no groups known: only uid and gid count
        groups.resize(glen / sizeof(gid_t) + 1);
    }
    p.admin = p.uid == 0 || (admin_group && (p.gid == *admin_group || std::find(p.groups.begin(), p.groups.end(),
                                                                                *admin_group) != p.groups.end()));
    return p;
}

result<pid_t> host_pid(const peer_credentials& peer, pid_t pid) {
    if (!peer.pid_ns) return pid;
    return attach::pid_from_namespace(pid, *peer.pid_ns);
}

std::optional<gid_t> group_id(const std::string& name) {
    group g{};
    group* found = nullptr;
    std::vector<char> buf(16384);
    if (::getgrnam_r(name.c_str(), &g, buf.data(), buf.size(), &found) != 0 || found == nullptr) return std::nullopt;
    return found->gr_gid;
}

}  // namespace heapd::daemon
