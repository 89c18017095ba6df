// The death watcher on its own, with real JVMs of two users: each death is handed over once, with
// its owner and main class, and one user's processes never take more of the watch than one user may.
#include "daemon/deaths/death_watcher.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <chrono>
#include <csignal>
#include <sstream>
#include <thread>

#include "support/isolated_jvm.h"
#include "support/jvm_process.h"

namespace heapd::daemon {
namespace {

using test::isolated_jvm;
using test::isolation;
using test::java_main;
using test::temp_user;

TEST(death_watcher, each_death_is_handed_over_once_and_one_user_takes_no_more_than_their_share) {
    temp_user alice, bob;
    ASSERT_TRUE(alice.ok() && bob.ok());
    isolated_jvm a1(java_main{"OffHeap"}, {"-Xmx32m"}, {"1", "1"}, isolation{&alice, false});
    isolated_jvm a2(java_main{"OffHeap"}, {"-Xmx32m"}, {"1", "1"}, isolation{&alice, false});
    isolated_jvm b1(java_main{"OffHeap"}, {"-Xmx32m"}, {"1", "1"}, isolation{&bob, false});
    ASSERT_TRUE(a1.ready() && a2.ready() && b1.ready());

    std::mutex mu;
    std::vector<death_record> deaths;
    std::ostringstream log_text;
    auto log = std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log_text));
    {
        // Room for every JVM of the host, but one per user other than root.
        death_watcher watcher(
            log, "host-1", 1024,
            [&](death_record r) {
                std::lock_guard lock(mu);
                deaths.push_back(std::move(r));
            },
            1);
        watcher.configure(std::chrono::milliseconds(200));
        for (int i = 0; i < 50 && watcher.polls() < 3; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        ASSERT_GE(watcher.polls(), 3u);
        for (const isolated_jvm* j : {&a1, &a2, &b1}) ASSERT_EQ(::kill(j->pid(), SIGKILL), 0);
        auto count = [&](uid_t uid) {
            std::lock_guard lock(mu);
            return std::count_if(deaths.begin(), deaths.end(), [&](const death_record& r) { return r.uid == uid; });
        };
        for (int i = 0; i < 100 && (count(alice.uid()) < 1 || count(bob.uid()) < 1); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // a second death of alice's would be in
    }
    std::lock_guard lock(mu);
    std::vector<const death_record*> alices, bobs;
    for (const death_record& r : deaths) {
        if (r.uid == alice.uid()) alices.push_back(&r);
        if (r.uid == bob.uid()) bobs.push_back(&r);
    }
    ASSERT_EQ(alices.size(), 1u) << log_text.str();
    ASSERT_EQ(bobs.size(), 1u) << log_text.str();
    EXPECT_EQ(bobs[0]->pid, b1.pid());
    EXPECT_EQ(bobs[0]->host, "host-1");
    EXPECT_EQ(bobs[0]->main_class, "OffHeap");
    EXPECT_EQ(bobs[0]->verdict.cause, death_cause::killed);
    EXPECT_EQ(bobs[0]->status.signal, SIGKILL);
    EXPECT_TRUE(bobs[0]->last_resident.has_value());
    EXPECT_TRUE(alices[0]->pid == a1.pid() || alices[0]->pid == a2.pid());
    EXPECT_NE(log_text.str().find("deaths: uid " + std::to_string(alice.uid()) +
                                  " has 1 JVMs watched already, the most one user may"),
              std::string::npos)
        << log_text.str();
}

}  // namespace
}  // namespace heapd::daemon
