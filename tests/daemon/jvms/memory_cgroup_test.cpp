// The limit a cgroup holds a process to: on trees laid out as cgroup v2 and v1 write them (the
// tightest limit of the cgroup and its ancestors, usage, OOM kills, swap), never through a symlink,
// and on a real v1 memory cgroup made by the test, with a process in it.
#include "daemon/jvms/memory_cgroup.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "support/jvm_process.h"
#include "support/test_cgroup.h"

namespace heapd::daemon {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
}

unique_fd open_dir(const fs::path& dir) { return unique_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY)); }

TEST(memory_cgroup, v2_takes_the_tightest_ancestor) {
    test::scratch_dir scratch;
    const fs::path root = scratch.path();
    write(root / "kubepods/memory.max", "104857600\n");
    write(root / "kubepods/pod1/memory.max", "max\n");
    write(root / "kubepods/pod1/app/memory.max", "209715200\n");
    write(root / "kubepods/pod1/app/memory.current", "99614720\n");
    write(root / "kubepods/pod1/app/memory.events", "low 0\nhigh 0\nmax 4\noom 2\noom_kill 2\n");
    write(root / "kubepods/pod1/app/memory.swap.max", "0\n");
    write(root / "kubepods/pod1/app/memory.stat", "anon 73400320\nfile 26214400\nkernel 0\n");
    write(root / "kubepods/pod1/app/memory.pressure",
          "some avg10=12.50 avg60=3.25 avg300=0.71 total=4242\nfull avg10=8.00 avg60=1.50 avg300=0.30 total=2121\n");
    const auto l = cgroup_limit(open_dir(root).get(), memory_cgroup{2, "/kubepods/pod1/app"});
    ASSERT_TRUE(l) << l.error().describe();
    EXPECT_EQ(l->bytes, 104857600);
    EXPECT_EQ(l->source, "cgroup v2 /kubepods/pod1/app (the limit of its ancestor /kubepods)");
    EXPECT_EQ(l->cgroup_usage, 99614720);
    EXPECT_EQ(l->oom_kills, 2);
    EXPECT_EQ(l->swap_limit, 0);
    EXPECT_EQ(l->cgroup_version, 2);
    EXPECT_TRUE(l->by_cgroup);
    EXPECT_EQ(l->cgroup_anonymous, 73400320);
    ASSERT_TRUE(l->pressure);
    EXPECT_EQ(l->pressure->some_avg10, 12.5);
    EXPECT_EQ(l->pressure->full_avg60, 1.5);
    EXPECT_EQ(l->pressure_source, "cgroup v2 /kubepods/pod1/app");
}

TEST(memory_cgroup, v1_files_and_no_limit) {
    test::scratch_dir scratch;
    const fs::path root = scratch.path();
    write(root / "memory.limit_in_bytes", "9223372036854771712\n");
    write(root / "jvm/memory.limit_in_bytes", "209715200\n");
    write(root / "jvm/memory.usage_in_bytes", "1234\n");
    write(root / "jvm/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n");
    write(root / "jvm/memory.stat", "cache 0\nrss 10\ntotal_cache 4096\ntotal_rss 8192\n");
    const auto l = cgroup_limit(open_dir(root).get(), memory_cgroup{1, "/jvm"});
    ASSERT_TRUE(l) << l.error().describe();
    EXPECT_EQ(l->bytes, 209715200);
    EXPECT_EQ(l->source, "cgroup v1 /jvm");
    EXPECT_EQ(l->cgroup_usage, 1234);
    EXPECT_EQ(l->oom_kills, 1);
    EXPECT_FALSE(l->swap_limit);
    EXPECT_EQ(l->cgroup_version, 1);
    EXPECT_EQ(l->cgroup_anonymous, 8192);
    EXPECT_FALSE(l->pressure);  // v1 has no pressure file of its own: the host's is taken instead

    write(root / "free/memory.limit_in_bytes", "9223372036854771712\n");
    const auto none = cgroup_limit(open_dir(root).get(), memory_cgroup{1, "/free"});
    ASSERT_TRUE(none);
    EXPECT_FALSE(none->bytes);
    EXPECT_FALSE(none->by_cgroup);
}

TEST(memory_cgroup, a_symlink_in_the_path_is_not_followed_and_a_gone_cgroup_is_not_found) {
    test::scratch_dir scratch;
    const fs::path root = scratch.path() + "/root";
    write(scratch.path() + "/elsewhere/memory.max", "4096\n");
    fs::create_directories(root);
    fs::create_directory_symlink(scratch.path() + "/elsewhere", root / "link");
    const auto l = cgroup_limit(open_dir(root).get(), memory_cgroup{2, "/link"});
    ASSERT_FALSE(l);
    EXPECT_EQ(l.error().code, error_code::io) << l.error().describe();
    const auto gone = cgroup_limit(open_dir(root).get(), memory_cgroup{2, "/gone"});
    ASSERT_FALSE(gone);
    EXPECT_EQ(gone.error().code, error_code::not_found);
}

TEST(memory_cgroup, a_real_v1_cgroup_holds_a_process_to_its_limit) {
    test::test_cgroup cgroup("memory");
    if (!cgroup.ok()) GTEST_SKIP() << "no writable cgroup v1 memory hierarchy here";
    ASSERT_TRUE(cgroup.set("memory.limit_in_bytes", "314572800"));
    const pid_t child = ::fork();
    if (child == 0) {
        ::pause();
        ::_exit(0);
    }
    const test::child_reaper reaper(child);  // killed and reaped however the test ends
    ASSERT_TRUE(cgroup.add(child));
    std::string note;
    const memory_limit l = limit_of_process(child, note);
    EXPECT_EQ(note, "");
    EXPECT_EQ(l.bytes, 314572800);
    EXPECT_TRUE(l.by_cgroup);
    EXPECT_EQ(l.source, "cgroup v1 " + cgroup.path());
    EXPECT_TRUE(l.cgroup_usage);
    EXPECT_EQ(l.oom_kills, 0);
}

}  // namespace
}  // namespace heapd::daemon
