// Whole reads and writes of descriptors: a pipe's bytes in full, a bound kept, no symbolic link
// followed by read_small_file.
#include "base/fd_io.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/unique_fd.h"
#include "support/jvm_process.h"

namespace heapd {
namespace {

TEST(fd_io, write_all_and_read_to_end_carry_every_byte_through_a_pipe) {
    int p[2];
    ASSERT_EQ(::pipe(p), 0);
    unique_fd read_end(p[0]), write_end(p[1]);
    const std::string bytes(40000, 'x');  // more than one read's buffer
    ASSERT_TRUE(write_all(write_end.get(), bytes.substr(0, 30000)));
    ASSERT_TRUE(write_all(write_end.get(), bytes.substr(30000)));
    write_end.reset();
    auto got = read_to_end(read_end.get(), 1 << 20);
    ASSERT_TRUE(got);
    EXPECT_EQ(*got, bytes);
}

TEST(fd_io, read_to_end_keeps_at_most_its_bound) {
    int p[2];
    ASSERT_EQ(::pipe(p), 0);
    unique_fd read_end(p[0]), write_end(p[1]);
    ASSERT_TRUE(write_all(write_end.get(), std::string(5000, 'y')));
    write_end.reset();
    auto got = read_to_end(read_end.get(), 1234);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->size(), 1234u);
}

TEST(fd_io, read_small_file_reads_proc_files_and_follows_no_link) {
    auto status = read_small_file("/proc/self/status", 1 << 20);
    ASSERT_TRUE(status);
    EXPECT_NE(status->find("Pid:"), std::string::npos);

    test::scratch_dir dir;
    const std::string target = dir.file("target"), link = dir.file("link");
    std::ofstream(target) << "secret";
    std::filesystem::create_symlink(target, link);
    EXPECT_EQ(read_small_file(target, 100).value_or(""), "secret");
    EXPECT_FALSE(read_small_file(link, 100));
    EXPECT_FALSE(read_small_file(dir.file("missing"), 100));
}

}  // namespace
}  // namespace heapd
