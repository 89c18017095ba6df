// The memory cgroup files of both versions as the kernel writes them: which cgroup a process is in,
// limits ("max" and v1's largest value for none), key-value files; paths that would leave the
// hierarchy are no cgroup.
#include "formats/memory/cgroup_files.h"

#include <gtest/gtest.h>

namespace heapd {
namespace {

TEST(cgroup_files, finds_the_v1_memory_controller_line) {
    const auto c = memory_cgroup_of(
        "12:pids:/user.slice\n7:cpu,cpuacct:/x\n4:memory:/heapd-test/jvm\n0::/user.slice/session-1.scope\n");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->version, 1);
    EXPECT_EQ(c->path, "/heapd-test/jvm");
    const auto joined = memory_cgroup_of("3:cpuset,memory,blkio:/a\n");
    ASSERT_TRUE(joined);
    EXPECT_EQ(joined->path, "/a");
    EXPECT_FALSE(memory_cgroup_of("3:memoryx:/a\n"));
}

TEST(cgroup_files, takes_the_unified_line_without_a_v1_memory_controller) {
    const auto c = memory_cgroup_of("0::/system.slice/app.service\n");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->version, 2);
    EXPECT_EQ(c->path, "/system.slice/app.service");
    const auto root = memory_cgroup_of("0::/\n");
    ASSERT_TRUE(root);
    EXPECT_EQ(root->path, "/");
}

TEST(cgroup_files, a_path_that_leaves_the_hierarchy_is_none) {
    EXPECT_FALSE(memory_cgroup_of("0::/../../etc\n"));
    EXPECT_FALSE(memory_cgroup_of("4:memory:/a/./b\n"));
    EXPECT_FALSE(memory_cgroup_of("4:memory:a/b\n"));
    EXPECT_FALSE(memory_cgroup_of("4:memory:/a//b\n"));
    EXPECT_FALSE(memory_cgroup_of(""));
}

TEST(cgroup_files, limits_with_none_as_nothing) {
    EXPECT_EQ(parse_limit("209715200\n"), 209715200);
    EXPECT_FALSE(parse_limit("max\n"));
    EXPECT_FALSE(parse_limit("9223372036854771712\n"));  // v1: no limit
    EXPECT_FALSE(parse_limit("-1\n"));
    EXPECT_FALSE(parse_limit("12abc\n"));
    EXPECT_FALSE(parse_limit(""));
}

TEST(cgroup_files, key_values_of_stat_events_and_oom_control) {
    const char* events = "low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n";
    EXPECT_EQ(key_value(events, "oom_kill"), 2);
    EXPECT_EQ(key_value(events, "oom"), 3);
    EXPECT_EQ(key_value(events, "max"), 12);
    EXPECT_FALSE(key_value(events, "oom_k"));
    const char* oom_control = "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n";
    EXPECT_EQ(key_value(oom_control, "oom_kill"), 1);
    EXPECT_EQ(key_value("anon 1234", "anon"), 1234);
    EXPECT_FALSE(key_value("anon x\n", "anon"));
}

TEST(cgroup_files, memory_pressure_of_the_host_and_of_a_v2_cgroup) {
    const auto p = parse_pressure(
        "some avg10=1.25 avg60=0.50 avg300=0.10 total=123456\nfull avg10=0.75 avg60=0.25 avg300=0.05 total=654\n");
    ASSERT_TRUE(p);
    EXPECT_EQ(p->some_avg10, 1.25);
    EXPECT_EQ(p->some_avg60, 0.5);
    EXPECT_EQ(p->full_avg10, 0.75);
    EXPECT_EQ(p->full_avg60, 0.25);
    // A kernel without "full" for memory, a value that is no share, a missing field: nothing.
    EXPECT_FALSE(parse_pressure("some avg10=1.25 avg60=0.50 avg300=0.10 total=1\n"));
    EXPECT_FALSE(parse_pressure("some avg10=101 avg60=0 avg300=0 total=1\nfull avg10=0 avg60=0 avg300=0 total=1\n"));
    EXPECT_FALSE(parse_pressure("some avg10=1x avg60=0 avg300=0 total=1\nfull avg10=0 avg60=0 avg300=0 total=1\n"));
    EXPECT_FALSE(parse_pressure("some avg60=0 avg300=0 total=1\nfull avg10=0 avg60=0 avg300=0 total=1\n"));
    EXPECT_FALSE(parse_pressure(""));
}

}  // namespace
}  // namespace heapd
