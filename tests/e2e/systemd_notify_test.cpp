// heapd serve as a Type=notify service: READY=1 with a STATUS= once it serves, WATCHDOG=1 pings
// at half of WATCHDOG_USEC, STOPPING=1 when it stops, all from the daemon's own pid (the unit says
// NotifyAccess=main), read from a NOTIFY_SOCKET this test owns.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <string>

#include "support/datagram_receiver.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

bool has_line(const std::string& message, const std::string& line) {
    return ("\n" + message + "\n").find("\n" + line + "\n") != std::string::npos;
}

// The index of the first message holding line, or -1.
long first_with(const std::vector<datagram>& all, const std::string& line) {
    auto it = std::find_if(all.begin(), all.end(), [&](const datagram& d) { return has_line(d.bytes, line); });
    return it == all.end() ? -1 : it - all.begin();
}

std::size_t count_with(const std::vector<datagram>& all, const std::string& line) {
    return static_cast<std::size_t>(
        std::count_if(all.begin(), all.end(), [&](const datagram& d) { return has_line(d.bytes, line); }));
}

TEST(systemd_notify, ready_with_status_then_watchdog_pings_then_stopping_all_from_the_daemon) {
    shared_dir dir;
    datagram_receiver notify(dir.file("notify"));
    ASSERT_TRUE(notify.ok());
    // 200 ms: pings every 100 ms.
    serve_process d({}, {"env", "NOTIFY_SOCKET=" + dir.file("notify"), "WATCHDOG_USEC=200000"});
    ASSERT_TRUE(d.ready()) << d.log();
    ASSERT_TRUE(notify.wait_for([](const auto& all) { return count_with(all, "WATCHDOG=1") >= 3; })) << d.log();
    auto before_stop = notify.received();
    const long ready = first_with(before_stop, "READY=1");
    ASSERT_GE(ready, 0);
    EXPECT_TRUE(has_line(before_stop[ready].bytes, "STATUS=serving on " + d.socket() + ": 0 job(s) running, 0 queued"))
        << before_stop[ready].bytes;
    EXPECT_GE(first_with(before_stop, "WATCHDOG=1"), ready);  // pings start once it serves
    EXPECT_EQ(first_with(before_stop, "STOPPING=1"), -1);

    EXPECT_EQ(d.stop(SIGTERM), 0) << d.log();
    auto all = notify.received();
    const long stopping = first_with(all, "STOPPING=1");
    ASSERT_GT(stopping, ready);
    EXPECT_TRUE(has_line(all[stopping].bytes, "STATUS=stopping on SIGTERM")) << all[stopping].bytes;
    for (const datagram& m : all) EXPECT_NE(m.sender, -1);
    const pid_t daemon = all.front().sender;
    for (const datagram& m : all) EXPECT_EQ(m.sender, daemon) << m.bytes;
    for (std::size_t i = static_cast<std::size_t>(stopping) + 1; i < all.size(); ++i)
        EXPECT_FALSE(has_line(all[i].bytes, "WATCHDOG=1")) << "a ping after STOPPING=1";
}

TEST(systemd_notify, no_pings_when_the_watchdog_is_meant_for_another_process) {
    shared_dir dir;
    datagram_receiver notify(dir.file("notify"));
    ASSERT_TRUE(notify.ok());
    // WATCHDOG_PID names pid 1, not heapd: the watchdog is not heapd's to feed.
    serve_process d({}, {"env", "NOTIFY_SOCKET=" + dir.file("notify"), "WATCHDOG_USEC=200000", "WATCHDOG_PID=1"});
    ASSERT_TRUE(d.ready()) << d.log();
    ASSERT_TRUE(notify.wait_for([](const auto& all) { return first_with(all, "READY=1") >= 0; })) << d.log();
    EXPECT_EQ(d.stop(SIGTERM), 0) << d.log();
    auto all = notify.received();
    EXPECT_GE(first_with(all, "STOPPING=1"), 0);
    EXPECT_EQ(count_with(all, "WATCHDOG=1"), 0u);
}

}  // namespace
}  // namespace heapd::test
