// /proc/PID/smaps as the kernel writes it: mappings with paths (spaces included), anonymous ones and
// [names], their resident, anonymous and swapped bytes; malformed text refused with its line.
#include "formats/memory/smaps.h"

#include <gtest/gtest.h>

namespace heapd {
namespace {

// An excerpt of a JDK 17 JVM's smaps (fields the parser skips left in).
constexpr const char* excerpt =
    "fc000000-ffe00000 rw-p 00000000 00:00 0 \n"
    "Size:              63488 kB\n"
    "KernelPageSize:        4 kB\n"
    "Rss:                 196 kB\n"
    "Pss:                 196 kB\n"
    "Anonymous:           196 kB\n"
    "Swap:                  8 kB\n"
    "VmFlags: rd wr mr mw me ac sd \n"
    "ffe00000-ffe75000 rw-p 00001000 08:01 1311402                    /usr/lib/jvm/java 17/classes.jsa\n"
    "Rss:                 468 kB\n"
    "Anonymous:            12 kB\n"
    "Swap:                  0 kB\n"
    "7ffd7351d000-7ffd7353e000 rw-p 00000000 00:00 0                          [stack]\n"
    "Rss:                  40 kB\n"
    "Anonymous:            40 kB\n"
    "Swap:                  0 kB\n";

TEST(smaps, reads_each_mapping_with_its_path_and_bytes) {
    const auto m = parse_smaps(excerpt);
    ASSERT_TRUE(m) << m.error().describe();
    ASSERT_EQ(m->size(), 3u);
    EXPECT_EQ((*m)[0].range.begin, 0xfc000000u);
    EXPECT_EQ((*m)[0].range.end, 0xffe00000u);
    EXPECT_STREQ((*m)[0].perms, "rw-p");
    EXPECT_EQ((*m)[0].path, "");
    EXPECT_EQ((*m)[0].rss, 196u * 1024);
    EXPECT_EQ((*m)[0].swap, 8u * 1024);
    EXPECT_FALSE((*m)[0].file_backed());
    EXPECT_EQ((*m)[1].path, "/usr/lib/jvm/java 17/classes.jsa");
    EXPECT_TRUE((*m)[1].file_backed());
    EXPECT_EQ((*m)[2].path, "[stack]");
    EXPECT_FALSE((*m)[2].file_backed());

    const smaps_totals t = totals_of(*m);
    EXPECT_EQ(t.rss, (196u + 468 + 40) * 1024);
    EXPECT_EQ(t.anonymous, (196u + 12 + 40) * 1024);
    EXPECT_EQ(t.file_rss, 468u * 1024);
    EXPECT_EQ(t.swap, 8u * 1024);
    EXPECT_EQ(resident_in(*m, {{0xfc000000u, 0x100000000u}}), (196u + 468) * 1024);
    EXPECT_EQ(resident_in(*m, {{0x1000, 0x2000}}), 0u);
}

TEST(smaps, refuses_what_is_no_smaps_naming_the_line) {
    const auto bad_header = parse_smaps("fc000000-ffe00000 rw-p 0\n");
    ASSERT_FALSE(bad_header);
    EXPECT_NE(bad_header.error().message.find("line 1"), std::string::npos) << bad_header.error().message;
    const auto bad_number = parse_smaps("1000-2000 r--p 0 00:00 0\nRss: lots kB\n");
    ASSERT_FALSE(bad_number);
    EXPECT_NE(bad_number.error().message.find("line 2: Rss"), std::string::npos) << bad_number.error().message;
    const auto backwards = parse_smaps("2000-1000 r--p 0 00:00 0\n");
    EXPECT_FALSE(backwards);
    const auto overflow = parse_smaps("1000-2000 r--p 0 00:00 0\nRss: 99999999999999999999 kB\n");
    EXPECT_FALSE(overflow);
    EXPECT_TRUE(parse_smaps(""));
}

}  // namespace
}  // namespace heapd
