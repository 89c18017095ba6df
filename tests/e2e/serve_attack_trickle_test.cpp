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

// Asks for n analyses of path as user on one connection, without waiting for them: how many were
// queued, and the last refusal's message.
std::pair<int, std::string> queue_analyses_as(const temp_user& user, const serve_process& d, const std::string& path,
                                              int n) {
    int out[2];
    if (::pipe(out) != 0) return {-1, "pipe"};
    const pid_t child = ::fork();
    if (child == 0) {
        ::close(out[0]);
        int queued = 0;
        std::string refused;
        if (become(user)) {
            raw_client c(d.socket());
            for (int i = 0; i < n && c.connected(); ++i) {
                if (!start_analysis(c, path, false, static_cast<std::uint64_t>(i + 1))) break;
                auto r = c.read_reply(std::chrono::seconds(10));
                if (r && r->kind == wire::reply_kind::result)
                    ++queued;
                else if (r)
                    refused = r->error.message;
            }
        }
        write_text(out[1], std::to_string(queued) + "\n" + refused);
        ::_exit(0);
    }
    ::close(out[1]);
    std::string text;
    char buffer[4096];
    for (ssize_t got; (got = ::read(out[0], buffer, sizeof buffer)) > 0;)
        text.append(buffer, static_cast<std::size_t>(got));
    ::close(out[0]);
    ::waitpid(child, nullptr, 0);
    const auto nl = text.find('\n');
    if (nl == std::string::npos) return {-1, text};
    return {std::stoi(text.substr(0, nl)), text.substr(nl + 1)};
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

// One user fills the job queue as far as they may: two JVMs of theirs whose attach sockets trickle
// hold their two dumps running (an owner runs two jobs at once at most), and 40 analyses asked for
// without waiting queue behind them. A user's share of the queue is a quarter of it (8 of 32): the
// rest are refused with why, and root's dump of another user's JVM, and that user's own dump, are
// queued and done. (The queue used to be one for all: 32 of the attacker's, and root's dump was
// refused with "too many jobs waiting (32)".)
TEST(serve_attack, one_user_fills_only_their_share_of_the_job_queue) {
    temp_user attacker, victim;
    ASSERT_TRUE(attacker.ok() && victim.ok());
    hostile_jvm first(attacker, hostile_act::trickle), second(attacker, hostile_act::trickle);
    ASSERT_TRUE(first.ok() && second.ok());
    isolated_jvm jvm = attach_target_of(victim);
    ASSERT_TRUE(jvm.ready());
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    for (const hostile_jvm* h : {&first, &second}) {
        auto asked = run_heapctl(d, {"dump", std::to_string(h->jvm.pid())}, &attacker);
        ASSERT_EQ(asked.exit_code, 0) << asked.err;
    }
    const auto [queued, refused] = queue_analyses_as(attacker, d, peer_dump, 40);
    EXPECT_EQ(queued, 8) << refused;
    EXPECT_NE(refused.find("you have 8 jobs waiting already, one user's share of the queue"), std::string::npos)
        << refused;
    auto root = run_heapctl(d, {"dump", std::to_string(jvm.pid()), "--wait", "--top", "1"});
    EXPECT_EQ(root.exit_code, 0) << root.err << d.log();
    auto own = run_heapctl(d, {"dump", std::to_string(jvm.pid()), "--wait", "--top", "1"}, &victim);
    EXPECT_EQ(own.exit_code, 0) << own.err << d.log();
}

}  // namespace
}  // namespace heapd::test
