#pragma once
// Who is on the other end of a connection (SO_PEERCRED, SO_PEERGROUPS) and what they may do:
// root and members of the heapd group may act on everything, anyone else on what is theirs.
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "attach/process_namespaces.h"
#include "base/error.h"

namespace heapd::daemon {

// The credentials of a connected process, read by the kernel when it connected.
struct peer_credentials {
    pid_t pid = 0;
    uid_t uid = static_cast<uid_t>(-1);
    gid_t gid = static_cast<gid_t>(-1);
    std::vector<gid_t> groups;  // supplementary groups
    bool admin = false;         // root or a member of the heapd group
    // The pid namespace the peer names pids in (a container's, for a client in one); unknown when
    // the peer was gone before it could be read.
    std::optional<attach::pid_namespace> pid_ns;
};

// Reads the peer of a connected Unix socket; admin_group is the heapd group's id when it exists.
result<peer_credentials> read_peer(int socket_fd, std::optional<gid_t> admin_group);

// True when the peer may see or act on something owned by owner.
inline bool may_access(const peer_credentials& peer, uid_t owner) { return peer.admin || peer.uid == owner; }

// The daemon's pid of the process the peer names pid: pid itself for a peer in the daemon's pid
// namespace (or one whose namespace is unknown); for a peer in a container, the process that has
// that pid in the container's namespace. no_such_process when it has none.
result<pid_t> host_pid(const peer_credentials& peer, pid_t pid);

// The id of a group by name, when it exists.
std::optional<gid_t> group_id(const std::string& name);

}  // namespace heapd::daemon
