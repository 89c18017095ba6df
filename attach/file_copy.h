#pragma once
// Copying a file someone else handed over (a staged heap dump, a client's dump) by its descriptor
// alone, into a new file of ours, bounded by the size it had when it was checked.
#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "base/error.h"

namespace heapd::attach {

// Copies the first size bytes of in (from offset 0) to a new file at path (created, never
// overwritten or followed as a link; mode 0600: heap dumps hold secrets); the copy is removed on
// failure. Bytes the file gains meanwhile are not copied; a file that shrank is an error.
result<void> copy_to_new_file(int in, std::uint64_t size, const std::string& path);

// Why a file a JVM's helper handed over (opened with the JVM's rights, its name removed) is not
// taken, or nothing when it may be: a regular file of the JVM's user whose last name is gone
// (st_nlink 0: no hard link left to a file of any other use), within max_bytes (0: no bound).
std::optional<std::string> handed_over_refusal(const struct stat& st, uid_t jvm_uid, std::uint64_t max_bytes);

}  // namespace heapd::attach
