// How heapd tells why a watched JVM died from its exit status and the OOM kill counts, and what
// the record says.
#include "daemon/deaths/death_record.h"

#include <gtest/gtest.h>

#include <csignal>

namespace heapd::daemon {
namespace {

death_facts with_status(int wait_status) {
    death_facts f;
    f.status = exit_status_of(wait_status, "pidfd");
    f.cgroup = "cgroup v1 /shop";
    return f;
}

TEST(death_record, a_sigkill_while_its_cgroups_oom_count_rose_is_an_oom_kill) {
    death_facts f = with_status(SIGKILL);
    f.cgroup_oom_before = 0;
    f.cgroup_oom_after = 1;
    const death_verdict v = judge_death(f);
    EXPECT_EQ(v.cause, death_cause::oom_kill);
    EXPECT_EQ(v.evidence, "SIGKILL; the OOM kill count of its memory cgroup (cgroup v1 /shop) rose from 0 to 1");
}

TEST(death_record, a_sigkill_with_the_count_unchanged_is_a_kill_not_an_oom) {
    death_facts f = with_status(SIGKILL);
    f.cgroup_oom_before = 2;
    f.cgroup_oom_after = 2;
    f.host_oom_before = 5;
    f.host_oom_after = 6;  // someone else's OOM kill elsewhere on the host: not this JVM's
    const death_verdict v = judge_death(f);
    EXPECT_EQ(v.cause, death_cause::killed);
    EXPECT_EQ(v.evidence, "SIGKILL, not from the OOM killer (its memory cgroup's OOM kill count stayed at 2)");
}

TEST(death_record, without_a_cgroup_the_hosts_count_is_the_clue) {
    death_facts f = with_status(SIGKILL);
    f.cgroup.clear();
    f.host_oom_before = 5;
    f.host_oom_after = 6;
    EXPECT_EQ(judge_death(f).cause, death_cause::oom_kill);
    f.host_oom_after = 5;
    EXPECT_EQ(judge_death(f).cause, death_cause::killed);
}

TEST(death_record, an_unknown_status_with_the_count_risen_is_an_oom_kill) {
    death_facts f;
    f.cgroup = "cgroup v2 /a";
    f.cgroup_oom_before = 0;
    f.cgroup_oom_after = 1;
    EXPECT_EQ(judge_death(f).cause, death_cause::oom_kill);
    f.cgroup_oom_after = 0;
    EXPECT_EQ(judge_death(f).cause, death_cause::unknown);
}

TEST(death_record, signals_and_exit_codes_name_crashes_stops_and_failures) {
    EXPECT_EQ(judge_death(with_status(SIGSEGV | 0x80)).cause, death_cause::crashed);
    EXPECT_EQ(judge_death(with_status(SIGSEGV | 0x80)).evidence, "SIGSEGV (core dumped)");
    EXPECT_EQ(judge_death(with_status(SIGABRT)).cause, death_cause::crashed);
    EXPECT_EQ(judge_death(with_status(SIGTERM)).cause, death_cause::killed);
    EXPECT_EQ(judge_death(with_status(0)).cause, death_cause::exited);
    EXPECT_EQ(judge_death(with_status(143 << 8)).cause, death_cause::stopped);
    EXPECT_EQ(judge_death(with_status(143 << 8)).evidence,
              "exit code 143: the JVM stopped on SIGTERM (its shutdown hooks ran)");
    EXPECT_EQ(judge_death(with_status(3 << 8)).cause, death_cause::failed);
    EXPECT_FALSE(worth_keeping(death_cause::exited));
    EXPECT_FALSE(worth_keeping(death_cause::stopped));
    EXPECT_TRUE(worth_keeping(death_cause::oom_kill));
    EXPECT_TRUE(worth_keeping(death_cause::failed));
}

TEST(death_record, the_record_says_how_near_its_limit_it_was_last_seen) {
    death_record r;
    r.pid = 42;
    r.status = exit_status_of(SIGKILL, "pidfd");
    r.verdict = {death_cause::oom_kill, "why"};
    r.last_resident = 199ll << 20;
    r.last_seen_ms = 10'000;
    r.died_ms = 11'500;
    r.limit.bytes = 200ll << 20;
    r.limit.by_cgroup = true;
    r.limit.source = "cgroup v1 /shop";
    EXPECT_EQ(death_headline(r),
              "killed by the kernel's OOM killer; last seen 1.5 s before at 199 MiB resident (100%) of its 200 MiB "
              "limit (cgroup v1 /shop)");
    r.limit.cgroup_usage = 190ll << 20;
    EXPECT_EQ(death_headline(r),
              "killed by the kernel's OOM killer; last seen 1.5 s before at 199 MiB resident, its memory cgroup at 190 "
              "MiB (95%) of its "
              "200 MiB limit (cgroup v1 /shop)");
    r.limit.by_cgroup = false;
    r.limit.bytes = 16ll << 30;
    EXPECT_EQ(
        death_headline(r),
        "killed by the kernel's OOM killer; last seen 1.5 s before at 199 MiB resident (1% of the host's memory)");
    r.limit.bytes = 200ll << 20;
    r.limit.by_cgroup = true;
    r.limit.cgroup_usage.reset();
    const wire::json j = to_json(r);
    EXPECT_EQ(j["cause"], "oom_kill");
    EXPECT_EQ(j["status"]["signal"], SIGKILL);
    EXPECT_EQ(j["status"]["signal_name"], "SIGKILL");
    EXPECT_EQ(j["limit"]["bytes"], 200ll << 20);
    EXPECT_EQ(j["last"]["resident"], 199ll << 20);
    EXPECT_FALSE(j.contains("breakdown"));
    r.verdict = {death_cause::failed, ""};
    r.status = exit_status_of(3 << 8, "zombie");
    r.last_resident.reset();
    EXPECT_EQ(death_headline(r), "exited with exit code 3");
    r.verdict = {death_cause::unknown, ""};
    EXPECT_EQ(death_headline(r), "ended; exit status unknown");
}

}  // namespace
}  // namespace heapd::daemon
