#pragma once
// Removing a name from a directory that others may write to (a JVM's sticky /tmp) with the rights
// of the file's owner, in a short-lived child: root needs CAP_FOWNER to remove another user's file
// from a sticky directory, which heapd's service does not have, and the owner's rights are all the
// removal needs (and all it should have: a name swapped meanwhile can only be another of theirs).
#include <sys/types.h>

#include <string>

namespace heapd::attach {

// Removes name (no '/') from the directory dir_fd as uid and gid; true when it was removed.
bool remove_as_owner(int dir_fd, const std::string& name, uid_t uid, gid_t gid);

}  // namespace heapd::attach
