#pragma once
// Copying a file someone else handed over (a staged heap dump, a client's dump) by its descriptor
// alone, into a new file of ours, bounded by the size it had when it was checked.
#include <cstdint>
#include <string>

#include "base/error.h"

namespace heapd::attach {

// Copies the first size bytes of in (from offset 0) to a new file at path (created, never
// overwritten or followed as a link; mode 0600: heap dumps hold secrets); the copy is removed on
// failure. Bytes the file gains meanwhile are not copied; a file that shrank is an error.
result<void> copy_to_new_file(int in, std::uint64_t size, const std::string& path);

}  // namespace heapd::attach
