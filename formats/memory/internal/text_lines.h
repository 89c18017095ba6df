#pragma once
// The lines of a text, one at a time and without their newlines: how the kernel's files and the
// JVM's answers are read.
#include <cstddef>
#include <string_view>

namespace heapd {
inline namespace memory {

// A text's lines in order; a last line without a newline counts.
class text_lines {
public:
    explicit text_lines(std::string_view text) : text_(text) {}
    // The next line into line; false at the end.
    bool next(std::string_view& line) {
        if (at_ >= text_.size()) return false;
        const std::size_t end = text_.find('\n', at_);
        line = text_.substr(at_, end == std::string_view::npos ? std::string_view::npos : end - at_);
        at_ = end == std::string_view::npos ? text_.size() : end + 1;
        return true;
    }

private:
    std::string_view text_;
    std::size_t at_ = 0;
};

}  // namespace memory
}  // namespace heapd
