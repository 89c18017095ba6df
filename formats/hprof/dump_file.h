#pragma once
// Opens a heap dump from a path, plain or gzip-compressed, as one mapped owner of its bytes.
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "base/error.h"
#include "formats/hprof/mapped_file.h"

namespace heapd {
inline namespace hprof {

// Where to inflate compressed dumps, and how much.
struct dump_open_options {
    std::string inflate_dir;  // empty: beside the dump, else $TMPDIR, else /tmp
    int inflate_fd = -1;      // an empty file to inflate into instead (kept open by the caller)
    // A dump that inflates to more than this is refused (a gzip bomb); none: no bound.
    std::optional<std::uint64_t> max_inflated_bytes{};
};

// Non-copyable owner of a dump's bytes: the file mapped as is, or for a gzip file (one or many
// concatenated members, as `jcmd GC.heap_dump -gz` writes) its inflated copy in an unlinked
// temporary file, which disappears when this object does.
class dump_file {
public:
    static result<dump_file> open(const std::string& path, const dump_open_options& options = {});
    // Takes an open descriptor (which it does not keep), e.g. one passed over a socket.
    static result<dump_file> from_fd(int fd, const std::string& name, const dump_open_options& options = {});

    std::span<const std::byte> bytes() const& { return map_.bytes(); }
    std::span<const std::byte> bytes() const&& = delete;
    const std::string& name() const { return name_; }
    // See mapped_file::release_resident.
    void release_resident() const { map_.release_resident(); }
    bool compressed() const { return compressed_; }
    std::uint64_t compressed_bytes() const { return compressed_bytes_; }
    // For a gzip file whose last member is cut short: what was inflated is kept; this says so.
    const std::string& inflate_warning() const { return inflate_warning_; }

private:
    mapped_file map_;
    std::string name_;
    bool compressed_ = false;
    std::uint64_t compressed_bytes_ = 0;
    std::string inflate_warning_;
};

// A new unlinked temporary file in dir, open for reading and writing (O_TMPFILE where the filesystem
// has it); -1 and errno on failure.
int unlinked_temp_file(const std::string& dir);

// True when the bytes start with the gzip magic.
bool is_gzip(std::span<const std::byte> bytes);

}  // namespace hprof
}  // namespace heapd
