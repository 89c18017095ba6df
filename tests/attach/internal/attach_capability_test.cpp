// Whether a JVM allows attach, read from its hsperfdata (sun.rt.jvmCapabilities) or its options:
// real JVMs with and without -XX:+DisableAttachMechanism, and hsperfdata buffers built by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "attach/internal/attach_capability.h"
#include "support/jvm_process.h"

namespace heapd::test {
namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

// An hsperfdata buffer in little-endian order with one string entry name=value (the layout
// HotSpot writes: a 32-byte prologue, then entries of a 20-byte header, the name, the data).
std::string perf_buffer(const std::string& name, const std::string& value) {
    auto u32 = [](std::string& s, std::uint32_t v) {
        for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    };
    std::string entry;
    const std::uint32_t name_offset = 20, data_offset = 20 + static_cast<std::uint32_t>(name.size()) + 1;
    const std::uint32_t length = data_offset + static_cast<std::uint32_t>(value.size()) + 1;
    u32(entry, length);
    u32(entry, name_offset);
    u32(entry, static_cast<std::uint32_t>(value.size()) + 1);
    entry += "B\x01\x05\x01";  // byte vector, flags, units: string, variability: constant
    u32(entry, data_offset);
    entry += name + '\0' + value + '\0';
    std::string b("\xCA\xFE\xC0\xC0\x01\x02\x00\x01", 8);  // magic, little endian, version 2.0, accessible
    u32(b, 32 + length);
    u32(b, 0);
    b.append(8, '\0');  // modification time
    u32(b, 32);
    u32(b, 1);
    return b + entry;
}

TEST(attach_capability, reads_strings_of_hsperfdata) {
    auto b = perf_buffer("sun.rt.jvmCapabilities", "1100");
    EXPECT_EQ(attach::perf_string(b, "sun.rt.jvmCapabilities"), "1100");
    EXPECT_EQ(attach::perf_string(b, "sun.rt.other"), std::nullopt);
    for (std::size_t cut = 0; cut < b.size(); ++cut)  // truncated anywhere: no crash, no answer
        EXPECT_EQ(attach::perf_string(b.substr(0, cut), "sun.rt.jvmCapabilities"), std::nullopt) << cut;
    std::string bad_length = b;
    bad_length[32] = '\x7f';  // entry longer than the buffer
    EXPECT_EQ(attach::perf_string(bad_length, "sun.rt.jvmCapabilities"), std::nullopt);
    EXPECT_EQ(attach::perf_string("not hsperfdata at all, no, not at all", "x"), std::nullopt);
}

TEST(attach_capability, tells_a_disabled_jvm_from_others) {
    demo_jvm open({"-Xmx64m"});
    demo_jvm closed({"-Xmx64m", "-XX:+DisableAttachMechanism"});
    ASSERT_TRUE(open.ready() && closed.ready());
    std::string perf = slurp("/tmp/hsperfdata_root/" + std::to_string(open.pid()));
    auto caps = attach::perf_string(perf, "sun.rt.jvmCapabilities");
    ASSERT_TRUE(caps);
    EXPECT_EQ(caps->substr(0, 1), "1");
    caps = attach::perf_string(slurp("/tmp/hsperfdata_root/" + std::to_string(closed.pid())), "sun.rt.jvmCapabilities");
    ASSERT_TRUE(caps);
    EXPECT_EQ(caps->substr(0, 1), "0");
    EXPECT_EQ(attach::perf_string(perf, "java.property.java.vm.name"), "OpenJDK 64-Bit Server VM");
    auto info_open = attach::read_process_info(open.pid());
    auto info_closed = attach::read_process_info(closed.pid());
    ASSERT_TRUE(info_open && info_closed);
    EXPECT_EQ(attach::attach_disabled(*info_open), false);
    EXPECT_EQ(attach::attach_disabled(*info_closed), true);
}

TEST(attach_capability, without_perfdata_the_command_line_tells) {
    demo_jvm closed({"-Xmx64m", "-XX:-UsePerfData", "-XX:+DisableAttachMechanism"});
    demo_jvm reopened({"-Xmx64m", "-XX:-UsePerfData", "-XX:+DisableAttachMechanism", "-XX:-DisableAttachMechanism"});
    ASSERT_TRUE(closed.ready() && reopened.ready());
    EXPECT_EQ(attach::attach_disabled(*attach::read_process_info(closed.pid())), true);
    EXPECT_EQ(attach::attach_disabled(*attach::read_process_info(reopened.pid())), false);
}

}  // namespace
}  // namespace heapd::test
