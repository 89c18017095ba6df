// Tests of opening dumps: plain files, gzip files of one or many members, cut and damaged gzip data,
// where the inflated copy lives and that it leaves nothing behind.
#include "formats/hprof/dump_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "support/hprof_builder.h"

namespace heapd {
namespace {

namespace fs = std::filesystem;
using test::byte_vector;
using test::hprof_builder;

// A fresh directory under the test temp dir, removed with everything in it at scope exit.
class temp_dir {
public:
    temp_dir() {
        std::string tmpl = ::testing::TempDir() + "heapd-dump-file-XXXXXX";
        char* made = ::mkdtemp(tmpl.data());
        EXPECT_NE(made, nullptr);
        path_ = tmpl;
    }
    ~temp_dir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    const std::string& path() const { return path_; }
    std::string file(const std::string& name) const { return path_ + "/" + name; }
    // Names of the entries in the directory.
    std::set<std::string> entries() const {
        std::set<std::string> out;
        for (const auto& e : fs::directory_iterator(path_)) out.insert(e.path().filename().string());
        return out;
    }

private:
    std::string path_;
};

void write_file(const std::string& path, const byte_vector& bytes) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    ASSERT_TRUE(static_cast<bool>(f)) << path;
}

// One complete gzip member holding data.
byte_vector gzip_member(std::span<const std::byte> data, int level = 6) {
    z_stream z{};
    EXPECT_EQ(deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    byte_vector out(deflateBound(&z, static_cast<uLong>(data.size())) + 64);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(data.data()));
    z.avail_in = static_cast<uInt>(data.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}

// A realistic dump of about 2.5 MiB: records, then arrays of varied, moderately compressible data.
byte_vector sample_dump() {
    hprof_builder b(8, "JAVA PROFILE 1.0.2", 1700000000000);
    b.utf8(1, "demo/Thing").load_class(1, 0x100, 0, 1);
    b.begin_segment();
    b.class_dump(0x100, 0, {});
    std::uint32_t seed = 12345;
    for (int a = 0; a < 40; ++a) {
        byte_vector data(64 * 1024);
        for (std::size_t i = 0; i < data.size(); ++i) {
            seed = seed * 1103515245 + 12345;
            data[i] = static_cast<std::byte>((seed >> 16) % 7 + static_cast<unsigned>(i % 13));
        }
        b.primitive_array(0x1000 + static_cast<std::uint64_t>(a), 8, static_cast<std::uint32_t>(data.size()), data);
    }
    b.end_segment().heap_dump_end();
    return b.bytes();
}

byte_vector bytes_of(const dump_file& d) { return byte_vector(d.bytes().begin(), d.bytes().end()); }

// True when /proc/self/maps shows a deleted file mapped from dir.
bool maps_deleted_file_in(const std::string& dir) {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line))
        if (line.find(" " + dir + "/") != std::string::npos && line.ends_with("(deleted)")) return true;
    return false;
}

TEST(dump_file, opens_a_plain_dump_as_is) {
    temp_dir dir;
    const byte_vector dump = sample_dump();
    write_file(dir.file("plain.hprof"), dump);
    auto d = dump_file::open(dir.file("plain.hprof"));
    ASSERT_TRUE(d.has_value()) << d.error().describe();
    EXPECT_FALSE(d->compressed());
    EXPECT_EQ(d->compressed_bytes(), 0u);
    EXPECT_EQ(d->name(), dir.file("plain.hprof"));
    EXPECT_EQ(d->inflate_warning(), "");
    EXPECT_EQ(bytes_of(*d), dump);
    EXPECT_EQ(dir.entries(), std::set<std::string>{"plain.hprof"});
}

TEST(dump_file, a_missing_file_is_an_io_error) {
    temp_dir dir;
    auto d = dump_file::open(dir.file("absent.hprof"));
    ASSERT_FALSE(d.has_value());
    EXPECT_EQ(d.error().code, error_code::io);
    EXPECT_NE(d.error().message.find(dir.file("absent.hprof")), std::string::npos) << d.error().message;
}

TEST(dump_file, inflates_a_single_gzip_member_beside_the_dump_and_leaves_nothing) {
    temp_dir dir;
    const byte_vector dump = sample_dump();
    const byte_vector gz = gzip_member(dump);
    ASSERT_LT(gz.size(), dump.size());
    write_file(dir.file("dump.hprof.gz"), gz);
    {
        auto d = dump_file::open(dir.file("dump.hprof.gz"));
        ASSERT_TRUE(d.has_value()) << d.error().describe();
        EXPECT_TRUE(d->compressed());
        EXPECT_EQ(d->compressed_bytes(), gz.size());
        EXPECT_EQ(d->inflate_warning(), "");
        EXPECT_EQ(d->bytes().size(), dump.size());
        EXPECT_EQ(bytes_of(*d), dump);
        // The inflated copy is mapped from an unlinked file in the dump's directory.
        EXPECT_TRUE(maps_deleted_file_in(dir.path()));
        EXPECT_EQ(dir.entries(), std::set<std::string>{"dump.hprof.gz"});
    }
    EXPECT_FALSE(maps_deleted_file_in(dir.path()));
    EXPECT_EQ(dir.entries(), std::set<std::string>{"dump.hprof.gz"});
}

TEST(dump_file, inflates_into_the_requested_directory) {
    temp_dir dump_dir, inflate_dir;
    const byte_vector dump = sample_dump();
    write_file(dump_dir.file("dump.hprof.gz"), gzip_member(dump));
    {
        auto d = dump_file::open(dump_dir.file("dump.hprof.gz"), {inflate_dir.path()});
        ASSERT_TRUE(d.has_value()) << d.error().describe();
        EXPECT_EQ(bytes_of(*d), dump);
        EXPECT_TRUE(maps_deleted_file_in(inflate_dir.path()));
        EXPECT_FALSE(maps_deleted_file_in(dump_dir.path()));
        EXPECT_TRUE(inflate_dir.entries().empty());
    }
    EXPECT_TRUE(inflate_dir.entries().empty());
    EXPECT_EQ(dump_dir.entries(), std::set<std::string>{"dump.hprof.gz"});
}

TEST(dump_file, an_unusable_inflate_directory_falls_back_to_tmpdir) {
    temp_dir dump_dir, tmp;
    const byte_vector dump = sample_dump();
    write_file(dump_dir.file("dump.hprof.gz"), gzip_member(dump));
    const char* old = std::getenv("TMPDIR");
    const std::string saved = old ? old : "";
    ::setenv("TMPDIR", tmp.path().c_str(), 1);
    {
        auto d = dump_file::open(dump_dir.file("dump.hprof.gz"), {dump_dir.file("no/such/dir")});
        ASSERT_TRUE(d.has_value()) << d.error().describe();
        EXPECT_EQ(bytes_of(*d), dump);
        EXPECT_TRUE(maps_deleted_file_in(tmp.path()));
    }
    if (old)
        ::setenv("TMPDIR", saved.c_str(), 1);
    else
        ::unsetenv("TMPDIR");
    EXPECT_TRUE(tmp.entries().empty());
}

TEST(dump_file, concatenated_members_are_inflated_in_order) {
    temp_dir dir;
    const byte_vector dump = sample_dump();
    const std::span<const std::byte> all(dump);
    const std::size_t a = 1000, b = dump.size() / 2;
    byte_vector gz = gzip_member(all.subspan(0, a), 1);
    byte_vector m2 = gzip_member(all.subspan(a, b - a), 9);
    byte_vector m3 = gzip_member(all.subspan(b), 6);
    gz.insert(gz.end(), m2.begin(), m2.end());
    gz.insert(gz.end(), m3.begin(), m3.end());
    write_file(dir.file("multi.hprof.gz"), gz);
    auto d = dump_file::open(dir.file("multi.hprof.gz"));
    ASSERT_TRUE(d.has_value()) << d.error().describe();
    EXPECT_EQ(d->compressed_bytes(), gz.size());
    EXPECT_EQ(d->inflate_warning(), "");
    EXPECT_EQ(bytes_of(*d), dump);
}

TEST(dump_file, zero_padding_between_and_after_members_is_skipped) {
    temp_dir dir;
    const byte_vector dump = sample_dump();
    const std::span<const std::byte> all(dump);
    byte_vector gz = gzip_member(all.subspan(0, 4096));
    gz.resize(gz.size() + 512);  // zeros
    byte_vector m2 = gzip_member(all.subspan(4096));
    gz.insert(gz.end(), m2.begin(), m2.end());
    gz.resize(gz.size() + 100);
    write_file(dir.file("padded.hprof.gz"), gz);
    auto d = dump_file::open(dir.file("padded.hprof.gz"));
    ASSERT_TRUE(d.has_value()) << d.error().describe();
    EXPECT_EQ(d->inflate_warning(), "");
    EXPECT_EQ(bytes_of(*d), dump);
}

TEST(dump_file, highly_compressible_data_inflates_completely) {
    temp_dir dir;
    hprof_builder b(8);
    b.begin_segment().primitive_array(0x10, 8, 6u << 20).end_segment();  // 6 MiB of zeros
    const byte_vector gz = gzip_member(b.bytes(), 9);
    ASSERT_LT(gz.size(), 64u * 1024);
    write_file(dir.file("zeros.hprof.gz"), gz);
    auto d = dump_file::open(dir.file("zeros.hprof.gz"));
    ASSERT_TRUE(d.has_value()) << d.error().describe();
    EXPECT_EQ(d->inflate_warning(), "");
    EXPECT_EQ(bytes_of(*d), b.bytes());
}

TEST(dump_file, a_cut_gzip_file_keeps_what_was_inflated_and_warns) {
    temp_dir dir;
    const byte_vector dump = sample_dump();
    byte_vector gz = gzip_member(dump);
    gz.resize(gz.size() / 2);
    write_file(dir.file("cut.hprof.gz"), gz);
    auto d = dump_file::open(dir.file("cut.hprof.gz"));
    ASSERT_TRUE(d.has_value()) << d.error().describe();
    EXPECT_TRUE(d->compressed());
    EXPECT_EQ(d->compressed_bytes(), gz.size());
    EXPECT_EQ(d->inflate_warning(), "gzip stream of " + dir.file("cut.hprof.gz") +
                                        " ends before its last member does: the dump was cut short");
    const byte_vector got = bytes_of(*d);
    EXPECT_GT(got.size(), dump.size() / 4);
    EXPECT_LT(got.size(), dump.size());
    EXPECT_TRUE(std::equal(got.begin(), got.end(), dump.begin()));  // a prefix of the original
    EXPECT_EQ(dir.entries(), std::set<std::string>{"cut.hprof.gz"});
}

TEST(dump_file, a_missing_trailer_keeps_all_the_data_and_warns) {
    temp_dir dir;
    const byte_vector dump = sample_dump();
    byte_vector gz = gzip_member(dump);
    gz.resize(gz.size() - 8);  // CRC-32 and ISIZE
    write_file(dir.file("notrailer.hprof.gz"), gz);
    auto d = dump_file::open(dir.file("notrailer.hprof.gz"));
    ASSERT_TRUE(d.has_value()) << d.error().describe();
    EXPECT_NE(d->inflate_warning(), "");
    EXPECT_EQ(bytes_of(*d), dump);
}

TEST(dump_file, a_cut_second_member_keeps_the_first_and_warns) {
    temp_dir dir;
    const byte_vector dump = sample_dump();
    const std::span<const std::byte> all(dump);
    const std::size_t half = dump.size() / 2;
    byte_vector gz = gzip_member(all.subspan(0, half));
    const std::size_t first = gz.size();
    byte_vector m2 = gzip_member(all.subspan(half));
    gz.insert(gz.end(), m2.begin(), m2.begin() + 10);  // only the second member's header
    write_file(dir.file("cut2.hprof.gz"), gz);
    ASSERT_GT(gz.size(), first);
    auto d = dump_file::open(dir.file("cut2.hprof.gz"));
    ASSERT_TRUE(d.has_value()) << d.error().describe();
    EXPECT_NE(d->inflate_warning(), "");
    EXPECT_EQ(bytes_of(*d), byte_vector(dump.begin(), dump.begin() + static_cast<std::ptrdiff_t>(half)));
}

TEST(dump_file, a_wrong_checksum_is_an_error_and_leaves_nothing) {
    temp_dir dir;
    const byte_vector dump = sample_dump();
    byte_vector gz = gzip_member(dump);
    gz[gz.size() - 8] ^= std::byte{0x5A};  // CRC-32
    write_file(dir.file("crc.hprof.gz"), gz);
    auto d = dump_file::open(dir.file("crc.hprof.gz"));
    ASSERT_FALSE(d.has_value());
    EXPECT_EQ(d.error().code, error_code::bad_value);
    EXPECT_NE(d.error().message.find("is damaged"), std::string::npos) << d.error().message;
    EXPECT_NE(d.error().message.find(dir.file("crc.hprof.gz")), std::string::npos) << d.error().message;
    EXPECT_EQ(dir.entries(), std::set<std::string>{"crc.hprof.gz"});
    EXPECT_FALSE(maps_deleted_file_in(dir.path()));
}

TEST(dump_file, a_damaged_header_is_an_error) {
    temp_dir dir;
    byte_vector gz = gzip_member(sample_dump());
    gz[2] = std::byte{7};  // compression method: not deflate
    write_file(dir.file("method.hprof.gz"), gz);
    auto d = dump_file::open(dir.file("method.hprof.gz"));
    ASSERT_FALSE(d.has_value());
    EXPECT_EQ(d.error().code, error_code::bad_value);
    EXPECT_EQ(dir.entries(), std::set<std::string>{"method.hprof.gz"});
}

TEST(dump_file, from_fd_reads_a_plain_descriptor_and_does_not_keep_it) {
    const byte_vector dump = sample_dump();
    int fd = ::memfd_create("dump", MFD_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, dump.data(), dump.size()), static_cast<ssize_t>(dump.size()));
    auto d = dump_file::from_fd(fd, "passed.hprof");
    ASSERT_TRUE(d.has_value()) << d.error().describe();
    EXPECT_EQ(d->name(), "passed.hprof");
    EXPECT_FALSE(d->compressed());
    ::close(fd);  // the mapping stays valid without the descriptor
    EXPECT_EQ(bytes_of(*d), dump);
}

TEST(dump_file, from_fd_inflates_into_the_requested_directory) {
    temp_dir dir;
    const byte_vector dump = sample_dump();
    const byte_vector gz = gzip_member(dump);
    int fd = ::memfd_create("dump.gz", MFD_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, gz.data(), gz.size()), static_cast<ssize_t>(gz.size()));
    auto d = dump_file::from_fd(fd, "passed.hprof.gz", {dir.path()});
    ::close(fd);
    ASSERT_TRUE(d.has_value()) << d.error().describe();
    EXPECT_TRUE(d->compressed());
    EXPECT_EQ(d->compressed_bytes(), gz.size());
    EXPECT_EQ(bytes_of(*d), dump);
    EXPECT_TRUE(maps_deleted_file_in(dir.path()));
    EXPECT_TRUE(dir.entries().empty());
}

TEST(dump_file, a_descriptor_that_is_not_a_regular_file_is_an_io_error) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    auto d = dump_file::from_fd(fds[0], "a pipe");
    ::close(fds[0]);
    ::close(fds[1]);
    ASSERT_FALSE(d.has_value());
    EXPECT_EQ(d.error().code, error_code::io);
}

TEST(dump_file, an_empty_file_opens_with_no_bytes) {
    temp_dir dir;
    write_file(dir.file("empty.hprof"), {});
    auto d = dump_file::open(dir.file("empty.hprof"));
    ASSERT_TRUE(d.has_value()) << d.error().describe();
    EXPECT_FALSE(d->compressed());
    EXPECT_EQ(d->bytes().size(), 0u);
}

TEST(dump_file, is_gzip_checks_the_two_magic_bytes) {
    const std::byte gz[] = {std::byte{0x1f}, std::byte{0x8b}, std::byte{0x08}};
    const std::byte short_one[] = {std::byte{0x1f}};
    const std::byte other[] = {std::byte{0x1f}, std::byte{0x8c}};
    const std::byte hprof[] = {std::byte{'J'}, std::byte{'A'}};
    EXPECT_TRUE(is_gzip(gz));
    EXPECT_TRUE(is_gzip(std::span(gz, 2)));
    EXPECT_FALSE(is_gzip(short_one));
    EXPECT_FALSE(is_gzip(other));
    EXPECT_FALSE(is_gzip(hprof));
    EXPECT_FALSE(is_gzip({}));
}

}  // namespace
}  // namespace heapd
