#include "formats/hprof/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>

namespace heapd {
inline namespace hprof {

result<mapped_file> mapped_file::open(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return fail_errno("cannot open", path);
    auto mapped = from_fd(fd, path);
    ::close(fd);
    return mapped;
}

result<mapped_file> mapped_file::from_fd(int fd, const std::string& name) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return fail_errno("cannot stat", name);
    if (!S_ISREG(st.st_mode)) return fail(error_code::io, name + " is not a regular file");
    mapped_file m;
    m.name_ = name;
    m.size_ = static_cast<std::size_t>(st.st_size);
    if (m.size_ == 0) return m;
    void* p = ::mmap(nullptr, m.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) return fail_errno("cannot map", name);
    m.data_ = static_cast<const std::byte*>(p);
    return m;
}

mapped_file::mapped_file(mapped_file&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)), name_(std::move(other.name_)) {}

mapped_file& mapped_file::operator=(mapped_file&& other) noexcept {
    if (this != &other) {
        this->~mapped_file();
        data_ = std::exchange(other.data_, nullptr);
        size_ = std::exchange(other.size_, 0);
        name_ = std::move(other.name_);
    }
    return *this;
}

mapped_file::~mapped_file() {
    if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
}

void mapped_file::advise_sequential() const {
    if (data_ != nullptr) ::madvise(const_cast<std::byte*>(data_), size_, MADV_SEQUENTIAL);
}

void mapped_file::release_resident() const {
    // A read-only file mapping: MADV_DONTNEED only unmaps the pages; reads fault them back in.
    if (data_ != nullptr) ::madvise(const_cast<std::byte*>(data_), size_, MADV_DONTNEED);
}

}  // namespace hprof
}  // namespace heapd
