#pragma once
// A read-only memory mapping of a whole file: the one owner that every view into a dump points into.
#include <cstddef>
#include <span>
#include <string>

#include "base/error.h"

namespace heapd {
inline namespace hprof {

// Non-copyable owner of a read-only mapping; views from bytes() must not outlive it.
class mapped_file {
public:
    // Maps the file at path read-only; a zero-length file maps to an empty span.
    static result<mapped_file> open(const std::string& path);
    // Maps an already-open descriptor (the descriptor is not kept).
    static result<mapped_file> from_fd(int fd, const std::string& name);

    mapped_file() = default;
    mapped_file(const mapped_file&) = delete;
    mapped_file& operator=(const mapped_file&) = delete;
    mapped_file(mapped_file&& other) noexcept;
    mapped_file& operator=(mapped_file&& other) noexcept;
    ~mapped_file();

    // The mapped bytes; callable only on an lvalue so a view cannot bind to a dying temporary.
    std::span<const std::byte> bytes() const& { return {data_, size_}; }
    std::span<const std::byte> bytes() const&& = delete;
    std::size_t size() const { return size_; }
    const std::string& name() const { return name_; }

    // Tells the kernel the mapping will be read front to back (read-ahead, early drop).
    void advise_sequential() const;
    // Drops this process's resident pages of the mapping (they stay in the page cache and come
    // back on the next read): the dump stops counting in the resident set while it is not read.
    void release_resident() const;

private:
    const std::byte* data_ = nullptr;
    std::size_t size_ = 0;
    std::string name_;
};

}  // namespace hprof
}  // namespace heapd
