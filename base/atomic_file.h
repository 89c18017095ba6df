#pragma once
// Files of the store written whole or not at all: a temporary name, fsync, rename, fsync the directory.
#include <sys/types.h>

#include <string>
#include <string_view>

#include "base/error.h"

namespace heapd::daemon {

// Who owns what the store writes and how others may read it.
struct file_access {
    mode_t file_mode = 0640;
    mode_t dir_mode = 0750;
    gid_t group = 0;       // the group given read access
    bool chown = false;    // set owner root and the group (only a daemon running as root can)
};

// Temporary files and directories start with this; anything so named is half-written.
inline constexpr std::string_view temp_prefix = ".tmp-";
inline bool is_temp_name(std::string_view name) { return name.starts_with(temp_prefix); }

// Writes content to path through a temporary file in the same directory, then renames it over.
result<void> write_file_atomic(const std::string& path, std::string_view content, const file_access& access);

// Creates a directory (parents too) with the access's mode and group; an existing one is
// tightened to it (never left readable by others).
result<void> make_dir(const std::string& path, const file_access& access);

// Sets mode and group of an existing file or directory, as the access says; a symbolic link or
// (for a file) anything but a regular file there is an error, never followed.
result<void> apply_access(const std::string& path, bool is_dir, const file_access& access);

// Makes a rename or unlink in dir durable.
void sync_dir(const std::string& dir);

// The whole contents of a file, at most max_bytes.
result<std::string> read_file(const std::string& path, std::size_t max_bytes);

} // namespace heapd::daemon
