#pragma once
// Error values shared by every library: a code, a message and, for file formats, the offset.
#include <cstdint>
#include <expected>
#include <string>

namespace heapd {

// What kind of failure an error_info reports; callers branch on this, people read the message.
enum class error_code {
    io,            // the operating system refused a call (open, mmap, write)
    bad_magic,     // not an HPROF file
    bad_header,    // header fields out of range (identifier size, version)
    out_of_bounds, // a length runs past its record, segment or the file
    unknown_tag,   // a record or sub-record tag this reader does not know
    bad_value,     // a field holds a value the format does not allow
    unsupported,   // valid input that this build cannot handle
    not_found,     // a requested object, class or thread is absent
    cancelled,     // the caller asked to stop (analysis_options::phase_started)
};

// Describes one failure; offset is the file offset it concerns, or no_offset.
struct error_info {
    static constexpr std::uint64_t no_offset = ~std::uint64_t{0};
    error_code code = error_code::io;
    std::string message;
    std::uint64_t offset = no_offset;

    // The message with its offset appended, as shown to people.
    std::string describe() const;
};

template <class T>
using result = std::expected<T, error_info>;

inline std::unexpected<error_info> fail(error_code code, std::string message,
                                        std::uint64_t offset = error_info::no_offset) {
    return std::unexpected(error_info{code, std::move(message), offset});
}

// Builds an io error from errno with the path and the call that failed.
std::unexpected<error_info> fail_errno(const std::string& what, const std::string& path);

} // namespace heapd
