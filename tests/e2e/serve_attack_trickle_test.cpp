// The daemon held up by a local user whose two JVMs' attach sockets they serve themselves, answering
// every request with "0\n" and then one byte every 10 s for 90 s: the answer of a JVM that is at
// work, but never done. Root's own sites command and root's own dump must be answered within their
// own time meanwhile, the user's conversations must end at their deadline whatever trickles in, and
// root's cancel must end the user's stuck dump at once.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <iostream>
#include <string>
#include <thread>

#include "formats/wire/protocol.h"
#include "support/hostile_user.h"
#include "support/isolated_jvm.h"
#include "support/jvm_process.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

using clock_type = std::chrono::steady_clock;
using wire::json;

double seconds_since(clock_type::time_point start) {
    return std::chrono::duration<double>(clock_type::now() - start).count();
}

// heapctl ARGS as user in the background, with how long it took.
struct timed_run {
    command_result result;
    double seconds = 0;
};
std::future<timed_run> in_background(const serve_process& d, std::vector<std::string> args, const temp_user* user) {
    return std::async(std::launch::async, [&d, args, user] {
        const auto start = clock_type::now();
        timed_run r{run_heapctl(d, args, user), 0};
        r.seconds = seconds_since(start);
        return r;
    });
}

TEST(serve_attack, a_user_trickling_answers_holds_neither_roots_sites_command_nor_its_own_past_the_deadline) {
    temp_user attacker;
    ASSERT_TRUE(attacker.ok());
    hostile_jvm first(attacker, hostile_act::trickle), second(attacker, hostile_act::trickle);
    ASSERT_TRUE(first.ok() && second.ok());
    isolated_jvm mine(java_main{"AttachTarget"}, {"-Xmx64m"}, {}, isolation{});  // root's own
    ASSERT_TRUE(mine.ready());
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    const auto start = clock_type::now();
    auto a = in_background(d, {"sites", std::to_string(first.jvm.pid()), "--status"}, &attacker);
    auto b = in_background(d, {"sites", std::to_string(second.jvm.pid()), "--status"}, &attacker);
    std::this_thread::sleep_for(std::chrono::seconds(2));  // both are talking to the tricklers
    auto root = run_heapctl(d, {"sites", std::to_string(mine.pid()), "--status"});
    const double root_took = seconds_since(start) - 2;
    EXPECT_EQ(root.exit_code, 0) << root.err;
    EXPECT_LT(root_took, 15) << d.log();
    const timed_run ra = a.get(), rb = b.get();
    std::cout << "root's sites --status: " << root_took << " s; the trickled ones: " << ra.seconds << " s and "
              << rb.seconds << " s\n";
    for (const timed_run& r : {ra, rb}) {
        EXPECT_NE(r.result.exit_code, 0);
        EXPECT_LT(r.seconds, 45) << r.result.err;  // the 30 s deadline, not the 90 s of trickling
        EXPECT_NE(r.result.err.find("did not finish its reply within"), std::string::npos) << r.result.err;
    }
}

TEST(serve_attack, a_user_trickling_a_dump_holds_no_worker_and_roots_cancel_ends_it_at_once) {
    temp_user attacker;
    ASSERT_TRUE(attacker.ok());
    hostile_jvm target(attacker, hostile_act::trickle);
    ASSERT_TRUE(target.ok());
    isolated_jvm mine(java_main{"AttachTarget"}, {"-Xmx64m"}, {}, isolation{});  // root's own
    ASSERT_TRUE(mine.ready());
    serve_process d;  // one worker, the default
    ASSERT_TRUE(d.ready()) << d.log();
    auto stuck = in_background(d, {"dump", std::to_string(target.jvm.pid()), "--wait"}, &attacker);
    // The attacker's job runs, talking to the trickler.
    json job = json::object();
    for (int i = 0; i < 100 && job.value("state", "") != "running"; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        const json jobs = json::parse(run_heapctl(d, {"jobs", "--json"}).out);
        if (!jobs.empty()) job = jobs[0];
    }
    ASSERT_EQ(job.value("state", ""), "running") << job.dump();
    std::this_thread::sleep_for(std::chrono::seconds(2));
    const auto start = clock_type::now();
    auto root = run_heapctl(d, {"dump", std::to_string(mine.pid()), "--wait", "--top", "1"});
    const double root_took = seconds_since(start);
    EXPECT_EQ(root.exit_code, 0) << root.err << d.log();
    EXPECT_LT(root_took, 30) << d.log();
    // Root cancels the attacker's job: it ends at once, its helper gone.
    const std::string id = std::to_string(job.value("id", 0));
    const auto cancel_start = clock_type::now();
    auto cancelled = run_heapctl(d, {"cancel", id});
    EXPECT_EQ(cancelled.exit_code, 0) << cancelled.err;
    const timed_run r = stuck.get();
    const double cancel_took = seconds_since(cancel_start);
    std::cout << "root's dump: " << root_took << " s; the attacker's dump ended " << cancel_took
              << " s after root's cancel, " << r.seconds << " s after it began\n";
    EXPECT_NE(r.result.exit_code, 0);
    EXPECT_NE(r.result.err.find("cancel"), std::string::npos) << r.result.err;
    EXPECT_LT(cancel_took, 1.5);
    for (const json& j : json::parse(run_heapctl(d, {"jobs", "--json"}).out))
        if (std::to_string(j.value("id", 0)) == id) {
            EXPECT_EQ(j.value("state", ""), "cancelled") << j.dump();
        }
}

}  // namespace
}  // namespace heapd::test
