// The names heapd arms JVMs with and the hook's search for them, the hook's words and printflag's
// answers, unit by unit (daemon/oom/arm_jvm.h, oom_hook.h); tests/e2e/oom_arming_test.cpp arms real JVMs.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/unique_fd.h"
#include "daemon/oom/arm_jvm.h"
#include "daemon/oom/oom_hook.h"
#include "support/jvm_process.h"

namespace heapd::test {
namespace {

namespace fs = std::filesystem;
using daemon::is_armed_dump_name;

TEST(arm_jvm, names_of_armed_dumps) {
    EXPECT_EQ(daemon::armed_dump_prefix(42, 1234), "heapd-oom-42-1234-");
    EXPECT_TRUE(is_armed_dump_name("heapd-oom-42-1234-0123456789abcdef.hprof", 42, 1234));
    EXPECT_TRUE(is_armed_dump_name("heapd-oom-42-1234-0123456789abcdef.hprof.2", 42, 1234));
    EXPECT_FALSE(is_armed_dump_name("heapd-oom-42-1234-0123456789abcdef.hprof", 42, 1235));  // another JVM's
    EXPECT_FALSE(is_armed_dump_name("heapd-oom-4-1234-0123456789abcdef.hprof", 42, 1234));
    EXPECT_FALSE(is_armed_dump_name("heapd-oom-42-1234-0123456789ABCDEF.hprof", 42, 1234));
    EXPECT_FALSE(is_armed_dump_name("heapd-oom-42-1234-0123456789abcdef.hprof.x", 42, 1234));
    EXPECT_FALSE(is_armed_dump_name("heapd-oom-42-1234-0123456789abcdef.hprof.", 42, 1234));
    EXPECT_FALSE(is_armed_dump_name("heapd-oom-42-1234-0123456789abcde.hprof", 42, 1234));
    EXPECT_FALSE(is_armed_dump_name("heapd-oom-42-1234-0123456789abcdef.hprofx", 42, 1234));
}

// The tag ending heapd's name is keyed: another key, JVM or user gives another, and only the name
// made for that JVM and user under the key is vouched for.
TEST(arm_jvm, armed_names_are_tagged_for_their_jvm_and_user) {
    hash_key key{}, other{};
    for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<std::uint8_t>(i * 7 + 1);
    other = key;
    other[15] ^= 0x80;
    const std::string tag = daemon::armed_dump_tag(key, 42, 1234, 1001);
    ASSERT_EQ(tag.size(), 16u);
    EXPECT_EQ(tag.find_first_not_of("0123456789abcdef"), std::string::npos);
    EXPECT_NE(daemon::armed_dump_tag(other, 42, 1234, 1001), tag);
    EXPECT_NE(daemon::armed_dump_tag(key, 42, 1234, 1002), tag);
    EXPECT_NE(daemon::armed_dump_tag(key, 42, 1235, 1001), tag);
    const std::string name = "heapd-oom-42-1234-" + tag + ".hprof";
    EXPECT_TRUE(daemon::armed_dump_vouched(key, name, 42, 1234, 1001));
    EXPECT_TRUE(daemon::armed_dump_vouched(key, name + ".1", 42, 1234, 1001));
    EXPECT_FALSE(daemon::armed_dump_vouched(key, name, 42, 1234, 1002));  // another user's word
    EXPECT_FALSE(daemon::armed_dump_vouched(other, name, 42, 1234, 1001));
    EXPECT_FALSE(daemon::armed_dump_vouched(key, "heapd-oom-42-1234-0123456789abcdef.hprof", 42, 1234, 1001));
}

TEST(arm_jvm, reads_printflag_answers_and_recognises_the_hook) {
    EXPECT_EQ(daemon::printed_flag_value("-XX:+HeapDumpOnOutOfMemoryError\n", "HeapDumpOnOutOfMemoryError"), "true");
    EXPECT_EQ(daemon::printed_flag_value("-XX:-HeapDumpOnOutOfMemoryError\n", "HeapDumpOnOutOfMemoryError"), "false");
    EXPECT_EQ(daemon::printed_flag_value("-XX:HeapDumpPath=/var/dumps\n", "HeapDumpPath"), "/var/dumps");
    EXPECT_EQ(daemon::printed_flag_value("-XX:HeapDumpPath=\n", "HeapDumpPath"), "");
    EXPECT_EQ(daemon::printed_flag_value("-XX:HeapDumpPathX=/a\n", "HeapDumpPath"), std::nullopt);
    EXPECT_EQ(daemon::printed_flag_value("no such flag\n", "HeapDumpPath"), std::nullopt);
    auto runs_heapd = [](const std::string& on_error) {
        oom_settings o;
        o.on_error = on_error;
        return daemon::hook_runs_heapd(o);
    };
    for (const char* yes :
         {"heapd dump %p", "/usr/local/bin/heapd dump %p --socket /run/x.sock", "date > /tmp/t; heapd dump %p"})
        EXPECT_TRUE(runs_heapd(yes)) << yes;
    for (const char* no : {"kill -9 %p", "/opt/myheapd dump %p", "heapdump.sh %p"}) EXPECT_FALSE(runs_heapd(no)) << no;
    // A hook that names a socket is for the daemon listening there only.
    auto reaches = [](const std::string& on_error, const std::string& socket) {
        oom_settings o;
        o.on_error = on_error;
        return daemon::hook_reaches(o, socket, "/run/heapd/heapd.sock");
    };
    EXPECT_TRUE(reaches("heapd dump %p", "/run/heapd/heapd.sock"));
    // One that names none is for the daemon at the standard socket (or the JVM's $HEAPD_SOCKET) only:
    // a test's daemon, or a second one, leaves it alone.
    EXPECT_FALSE(reaches("heapd dump %p", "/tmp/heapd-test-1/heapd.sock"));
    {
        oom_settings o;
        o.on_error = "heapd dump %p";
        EXPECT_TRUE(daemon::hook_reaches(o, "/srv/h.sock", "/srv/h.sock"));
    }
    EXPECT_TRUE(reaches("heapd dump %p --socket /run/a.sock", "/run/a.sock"));
    EXPECT_TRUE(reaches("heapd dump %p --socket='/run/a.sock' --spool /s; date", "/run/a.sock"));
    EXPECT_FALSE(reaches("heapd dump %p --socket /run/a.sock", "/run/b.sock"));
    EXPECT_FALSE(reaches("heapd dump %p --socket=/run/a.sock", "/run/heapd/heapd.sock"));
    EXPECT_TRUE(reaches("heapd dump %p; other --socket /run/a.sock", "/run/heapd/heapd.sock"));
    EXPECT_FALSE(reaches("heapd dump %p; other --socket /run/a.sock", "/run/b.sock"));
    EXPECT_FALSE(reaches("kill -9 %p", "/run/heapd/heapd.sock"));
}

// The hook takes the newest armed dump of its JVM owned by the JVM's user, never a link, never
// another JVM's or another user's file.
TEST(arm_jvm, the_hook_finds_the_newest_armed_dump_of_its_jvm_only) {
    scratch_dir dir;
    auto make = [&](const std::string& name, int age_s, uid_t owner) {
        const std::string path = dir.file(name);
        std::ofstream(path) << name;
        struct timespec times[2] = {{::time(nullptr) - age_s, 0}, {::time(nullptr) - age_s, 0}};
        ::utimensat(AT_FDCWD, path.c_str(), times, 0);
        EXPECT_EQ(::chown(path.c_str(), owner, owner), 0);
    };
    const std::string base = "heapd-oom-7-99-00000000000000aa.hprof";
    make(base, 30, 0);
    make(base + ".1", 20, 0);                                 // the JVM's second dump: newer
    make("heapd-oom-7-98-00000000000000bb.hprof", 1, 0);      // an earlier JVM with the same pid
    make("heapd-oom-7-99-00000000000000cc.hprof", 2, 65534);  // another user's, newest
    make("java_pid7.hprof", 0, 0);
    fs::create_symlink(dir.file(base), dir.file("heapd-oom-7-99-00000000000000dd.hprof"));  // a link
    unique_fd tmp(::open(dir.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    unique_fd fd;
    EXPECT_EQ(daemon::find_armed_dump(tmp.get(), 7, 99, 0, fd), base + ".1");
    ASSERT_TRUE(fd);
    char text[64] = {};
    EXPECT_GT(::pread(fd.get(), text, sizeof text - 1, 0), 0);
    EXPECT_EQ(std::string(text), base + ".1");
    unique_fd none;
    EXPECT_EQ(daemon::find_armed_dump(tmp.get(), 8, 99, 0, none), "");
    EXPECT_FALSE(none);
}

}  // namespace
}  // namespace heapd::test
