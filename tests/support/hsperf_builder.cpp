#include "support/hsperf_builder.h"

#include <fstream>
#include <stdexcept>

namespace heapd::test {
namespace {

void put(std::vector<std::byte>& out, std::size_t at, std::uint64_t v, int size, bool le) {
    for (int i = 0; i < size; ++i) {
        int shift = le ? 8 * i : 8 * (size - 1 - i);
        out[at + static_cast<std::size_t>(i)] = static_cast<std::byte>((v >> shift) & 0xff);
    }
}

}  // namespace

hsperf_builder::hsperf_builder(bool little_endian, std::size_t file_size)
    : little_endian_(little_endian), file_size_(file_size) {}

void hsperf_builder::put_u32(std::vector<std::byte>& file, std::size_t offset, std::uint32_t v) const {
    put(file, offset, v, 4, little_endian_);
}

void hsperf_builder::add_entry(const std::string& name, char type, std::uint8_t units, std::uint8_t variability,
                               std::uint32_t vector_length, const std::vector<std::byte>& data) {
    const std::size_t element = type == 'J' ? 8 : 1;
    std::size_t size = 20 + name.size() + 1;
    if (size % element != 0) size += element - size % element;  // data aligned to its element size
    const std::size_t data_offset = size;
    size += data.size();
    size = (size + 7) & ~std::size_t{7};  // entries in units of 8 bytes
    const std::size_t at = entries_.size();
    offsets_.push_back(at);
    entries_.resize(at + size);
    put(entries_, at, size, 4, little_endian_);
    put(entries_, at + 4, 20, 4, little_endian_);
    put(entries_, at + 8, vector_length, 4, little_endian_);
    entries_[at + 12] = static_cast<std::byte>(type);
    entries_[at + 13] = std::byte{1};  // supported
    entries_[at + 14] = static_cast<std::byte>(units);
    entries_[at + 15] = static_cast<std::byte>(variability);
    put(entries_, at + 16, data_offset, 4, little_endian_);
    for (std::size_t i = 0; i < name.size(); ++i) entries_[at + 20 + i] = static_cast<std::byte>(name[i]);
    for (std::size_t i = 0; i < data.size(); ++i) entries_[at + data_offset + i] = data[i];
}

hsperf_builder& hsperf_builder::add_long(const std::string& name, std::int64_t value, std::uint8_t units,
                                         std::uint8_t variability) {
    std::vector<std::byte> data(8);
    put(data, 0, static_cast<std::uint64_t>(value), 8, little_endian_);
    add_entry(name, 'J', units, variability, 0, data);
    return *this;
}

hsperf_builder& hsperf_builder::add_string(const std::string& name, const std::string& value,
                                           std::uint32_t vector_length, std::uint8_t variability) {
    if (vector_length == 0) vector_length = static_cast<std::uint32_t>(value.size() + 1);
    std::vector<std::byte> data(vector_length);
    for (std::size_t i = 0; i < value.size() && i < vector_length; ++i) data[i] = static_cast<std::byte>(value[i]);
    add_entry(name, 'B', units_string, variability, vector_length, data);
    return *this;
}

std::vector<std::byte> hsperf_builder::build() const {
    std::vector<std::byte> out(std::max(file_size_, used()));
    out[0] = std::byte{0xCA};
    out[1] = std::byte{0xFE};
    out[2] = std::byte{0xC0};
    out[3] = std::byte{0xC0};
    out[4] = static_cast<std::byte>(little_endian_ ? 1 : 0);
    out[5] = static_cast<std::byte>(major_);
    out[6] = static_cast<std::byte>(minor_);
    out[7] = static_cast<std::byte>(accessible_ ? 1 : 0);
    put(out, 8, used(), 4, little_endian_);            // used
    put(out, 12, 0, 4, little_endian_);                // overflow
    put(out, 16, 1234567, 8, little_endian_);          // modification time stamp
    put(out, 24, 32, 4, little_endian_);               // entry offset
    put(out, 28, offsets_.size(), 4, little_endian_);  // entries
    for (std::size_t i = 0; i < entries_.size(); ++i) out[32 + i] = entries_[i];
    return out;
}

void hsperf_builder::write(const std::string& path) const {
    auto bytes = build();
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!f) throw std::runtime_error("cannot write " + path);
}

}  // namespace heapd::test
