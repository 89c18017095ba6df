#pragma once
// Files written whole or not at all: a temporary name beside the file, fsync, rename, fsync the
// directory. The store's files, the analysis index, a stripped dump and a spooled request are all
// written this way.
#include <sys/types.h>

#include <string>
#include <string_view>

#include "base/error.h"
#include "base/unique_fd.h"

namespace heapd {

// Who owns what the store writes and how others may read it.
struct file_access {
    mode_t file_mode = 0640;
    mode_t dir_mode = 0750;
    gid_t group = 0;     // the group given read access
    bool chown = false;  // set owner root and the group (only a daemon running as root can)
};

// Temporary files and directories start with this; anything so named is half-written.
inline constexpr std::string_view temp_prefix = ".tmp-";
inline bool is_temp_name(std::string_view name) { return name.starts_with(temp_prefix); }

// A file being written under a temporary name (".tmp-NAME-XXXXXX" in the same directory, created
// with O_EXCL: never through a link) until commit() renames it over its path; removed if never
// committed.
class atomic_file {
public:
    // A new, empty temporary file for path, with mode (0600 before the caller changes it).
    static result<atomic_file> create(const std::string& path, mode_t mode = 0600);
    atomic_file(atomic_file&& other) noexcept;
    atomic_file& operator=(atomic_file&&) = delete;
    atomic_file(const atomic_file&) = delete;
    atomic_file& operator=(const atomic_file&) = delete;
    ~atomic_file();  // removes the temporary file unless committed

    int fd() const { return fd_.get(); }
    const std::string& temp_path() const { return temp_; }
    result<void> write(std::string_view bytes);
    // Syncs the file, closes it, renames it over its path and syncs the directory.
    result<void> commit();

private:
    atomic_file(std::string path, std::string temp, unique_fd fd);
    std::string path_, temp_;
    unique_fd fd_;
    bool done_ = false;
};

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

// The folder of a path as dirname(1) says it: "." for a bare name, "/" for a name in the root.
std::string parent_of(const std::string& path);

// The whole contents of a file, at most max_bytes.
result<std::string> read_file(const std::string& path, std::size_t max_bytes);

}  // namespace heapd
