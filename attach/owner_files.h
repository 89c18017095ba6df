#pragma once
// Names that another user controls (a JVM's sticky /tmp, a path a spooled request gives), reached
// with that user's rights in a short-lived child (base/child_call.h), never with heapd's: root needs
// CAP_FOWNER to remove another user's file from a sticky directory, which heapd's service does not
// have; and a name resolved as root could lead through a link, /proc/PID/root or a mount the user
// made to anything root may open, a terminal among them (which would become the daemon's own).
#include <sys/types.h>

#include <cstdint>
#include <string>

#include "base/error.h"
#include "base/unique_fd.h"

namespace heapd::attach {

// Removes name (no '/') from the directory dir_fd as uid and gid; true when it was removed.
bool remove_as_owner(int dir_fd, const std::string& name, uid_t uid, gid_t gid);

// Removes the name path (absolute) as uid and gid when it is (without following a link at its
// end) the file dev and ino name: a name that leads elsewhere now is left alone. For uid 0 the
// file's own owner removes it (a sticky directory). True when removed.
bool remove_path_as_owner(const std::string& path, uid_t uid, gid_t gid, std::uint64_t dev, std::uint64_t ino);

// Opens path (absolute) for reading as uid and gid (no supplementary groups): every step resolved
// with that user's rights, the last never through a link, never blocking on a FIFO and never as a
// controlling terminal. Only a regular file is handed back. With remove_name, the name is removed
// once open (as that user). Errors: permission_denied, not_found, bad_value (not a regular file),
// io, timed_out.
result<unique_fd> open_as_owner(const std::string& path, uid_t uid, gid_t gid, bool remove_name);

}  // namespace heapd::attach
