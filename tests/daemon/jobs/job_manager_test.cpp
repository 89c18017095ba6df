// The job manager: a bounded pool, states from queued to done, failed or cancelled, listeners on the
// io_context thread, persisted records.
#include "daemon/jobs/job_manager.h"

#include <gtest/gtest.h>

#include <future>
#include <mutex>
#include <thread>

#include <spdlog/sinks/ostream_sink.h>
#include <boost/asio/io_context.hpp>

#include "support/jvm_process.h"

namespace heapd::daemon {
namespace {

using test::scratch_dir;

// A store, a logger writing into a string, and an io_context the test runs.
struct fixture {
    scratch_dir dir;
    std::ostringstream log_text;
    std::shared_ptr<spdlog::logger> log =
        std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log_text));
    boost::asio::io_context io;
    std::unique_ptr<store> st;
    fixture() {
        store_options o;
        o.root = dir.file("store");
        store_recovery rec;
        st = std::move(*store::open(o, rec));
    }
    // Runs the io_context until pred holds (at most 60 s).
    template <class P>
    bool run_until(P pred) {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (!pred() && std::chrono::steady_clock::now() < deadline) {
            io.restart();
            io.run_for(std::chrono::milliseconds(10));
        }
        return pred();
    }
};

job_record spec(const char* subject) {
    job_record r;
    r.kind = "analyze";
    r.owner_uid = 1000;
    r.trigger = "test";
    r.subject = subject;
    return r;
}

// A job record of another owner.
job_record of(const char* subject, uid_t owner) {
    job_record r = spec(subject);
    r.owner_uid = owner;
    return r;
}

TEST(job_manager, runs_jobs_one_at_a_time_with_one_worker) {
    fixture f;
    job_manager jobs(f.io, *f.st, 1, f.log);
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    std::atomic<int> running{0}, most{0};
    auto work = [&](job_context& ctx) -> job_outcome {
        most = std::max(most.load(), ++running);
        ctx.progress("waiting", 1, 2);
        released.wait();
        --running;
        return "entry-" + std::to_string(ctx.id());
    };
    std::vector<job_record> seen;
    job_record a = jobs.submit(spec("a"), work, [&](const job_record& r) { seen.push_back(r); });
    job_record b = jobs.submit(spec("b"), work);
    EXPECT_EQ(a.id + 1, b.id);
    ASSERT_TRUE(f.run_until([&] { return jobs.find(a.id)->state == job_state::running; }));
    EXPECT_EQ(jobs.find(b.id)->state, job_state::queued);  // the one worker is busy
    EXPECT_EQ(jobs.count().running, 1u);
    EXPECT_EQ(jobs.count().queued, 1u);
    release.set_value();
    ASSERT_TRUE(f.run_until([&] { return jobs.find(b.id)->final(); }));
    EXPECT_EQ(most.load(), 1);
    auto done = *jobs.find(a.id);
    EXPECT_EQ(done.state, job_state::done);
    EXPECT_EQ(done.entry, "entry-" + std::to_string(a.id));
    EXPECT_GE(done.finished_ms, done.started_ms);
    // The listener heard the states in order, the progress between them, and nothing after the end.
    ASSERT_TRUE(f.run_until([&] { return !seen.empty() && seen.back().final(); }));
    EXPECT_EQ(seen.front().state, job_state::queued);
    bool progress = false;
    for (const auto& r : seen) progress = progress || (r.phase == "waiting" && r.done == 1 && r.total == 2);
    EXPECT_TRUE(progress);
    EXPECT_EQ(seen.back().state, job_state::done);
    // One line at the start and one at the end of each job.
    const std::string log = f.log_text.str();
    EXPECT_NE(log.find("job " + std::to_string(a.id) + " analyze started: pid 0 (client), trigger \"test\", a, 0 B"),
              std::string::npos)
        << log;
    EXPECT_NE(log.find("job " + std::to_string(a.id) + " analyze done after"), std::string::npos) << log;
}

TEST(job_manager, one_owners_queued_jobs_do_not_starve_anothers) {
    fixture f;
    job_manager jobs(f.io, *f.st, 1, f.log);
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    std::mutex mu;
    std::vector<std::string> order;
    auto work = [&](job_context& ctx) -> job_outcome {
        released.wait();
        std::lock_guard lock(mu);
        order.push_back(jobs.find(ctx.id())->subject);
        return "entry";
    };
    job_record first = jobs.submit(of("a1", 1001), work);
    ASSERT_TRUE(f.run_until([&] { return jobs.find(first.id)->state == job_state::running; }));
    jobs.submit(of("a2", 1001), work);
    jobs.submit(of("a3", 1001), work);
    job_record last = jobs.submit(of("b1", 1002), work);  // queued last, by another owner
    release.set_value();
    ASSERT_TRUE(f.run_until([&] {
        std::lock_guard lock(mu);
        return order.size() == 4;
    }));
    EXPECT_EQ(order, (std::vector<std::string>{"a1", "b1", "a2", "a3"}));
    EXPECT_TRUE(jobs.find(last.id)->final());
}

// One worker: a job that waits outside (a JVM that answers slowly, or never) gives its share to
// the next job, even to one of the same owner, and takes it back once it is free; an owner's third
// job waits while two of theirs wait outside, and another owner's job goes first.
TEST(job_manager, a_job_waiting_outside_gives_its_share_and_one_owner_holds_at_most_two) {
    fixture f;
    job_manager jobs(f.io, *f.st, 1, f.log);
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    std::atomic<int> outside{0}, inside{0}, most_inside{0};
    auto slow_jvm = [&](job_context& ctx) -> job_outcome {
        {
            auto away = ctx.waiting_outside();
            ++outside;
            released.wait();
            --outside;
        }
        most_inside = std::max(most_inside.load(), ++inside);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        --inside;
        return "slow";
    };
    auto quick = [&](job_context&) -> job_outcome {
        most_inside = std::max(most_inside.load(), ++inside);
        --inside;
        return "quick";
    };
    job_record a1 = jobs.submit(of("a1", 1001), slow_jvm);
    job_record a2 = jobs.submit(of("a2", 1001), slow_jvm);
    ASSERT_TRUE(f.run_until([&] { return outside.load() == 2; }));
    job_record a3 = jobs.submit(of("a3", 1001), quick);  // the owner's third: waits for one of theirs
    job_record b1 = jobs.submit(of("b1", 1002), quick);
    ASSERT_TRUE(f.run_until([&] { return jobs.find(b1.id)->final(); }));
    EXPECT_EQ(jobs.find(b1.id)->state, job_state::done);
    EXPECT_EQ(jobs.find(a3.id)->state, job_state::queued);
    EXPECT_EQ(jobs.count().running, 2u);
    release.set_value();
    ASSERT_TRUE(f.run_until(
        [&] { return jobs.find(a1.id)->final() && jobs.find(a2.id)->final() && jobs.find(a3.id)->final(); }));
    EXPECT_EQ(most_inside.load(), 1);  // one share: heapd's own work never ran twice at once
    EXPECT_EQ(jobs.find(a2.id)->state, job_state::done);
    EXPECT_EQ(jobs.find(a3.id)->state, job_state::done);
}

// A running job cancelled while it waits outside ends at once, though the one share is taken.
TEST(job_manager, a_job_cancelled_while_it_waits_outside_ends_without_waiting_for_a_share) {
    fixture f;
    job_manager jobs(f.io, *f.st, 1, f.log);
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    std::atomic<bool> away_now{false}, busy{false};
    job_record a = jobs.submit(spec("a"), [&](job_context& ctx) -> job_outcome {
        {
            auto away = ctx.waiting_outside();
            away_now = true;
            while (!ctx.cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        return fail(error_code::cancelled, "cancelled");
    });
    ASSERT_TRUE(f.run_until([&] { return away_now.load(); }));
    job_record b = jobs.submit(spec("b"), [&](job_context&) -> job_outcome {
        busy = true;
        released.wait();  // holds the one share
        return "b";
    });
    ASSERT_TRUE(f.run_until([&] { return busy.load(); }));
    jobs.cancel(a.id);
    ASSERT_TRUE(f.run_until([&] { return jobs.find(a.id)->final(); }));
    EXPECT_EQ(jobs.find(a.id)->state, job_state::cancelled);
    EXPECT_EQ(jobs.find(b.id)->state, job_state::running);
    release.set_value();
    ASSERT_TRUE(f.run_until([&] { return jobs.find(b.id)->final(); }));
}

TEST(job_manager, cancels_queued_and_running_jobs) {
    fixture f;
    job_manager jobs(f.io, *f.st, 1, f.log);
    std::atomic<bool> started{false};
    auto cooperative = [&](job_context& ctx) -> job_outcome {
        started = true;
        while (!ctx.cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        return fail(error_code::cancelled, "cancelled");
    };
    std::atomic<bool> ran_b{false};
    job_record a = jobs.submit(spec("a"), cooperative);
    job_record b = jobs.submit(spec("b"), [&](job_context&) -> job_outcome {
        ran_b = true;
        return "x";
    });
    ASSERT_TRUE(f.run_until([&] { return started.load(); }));
    auto cancelled_b = jobs.cancel(b.id);
    ASSERT_TRUE(cancelled_b.has_value());
    EXPECT_EQ(cancelled_b->state, job_state::cancelled);
    EXPECT_EQ(jobs.cancel(a.id)->state, job_state::running);  // asked; it stops at its next check
    ASSERT_TRUE(f.run_until([&] { return jobs.find(a.id)->final(); }));
    EXPECT_EQ(jobs.find(a.id)->state, job_state::cancelled);
    EXPECT_FALSE(ran_b.load());
    EXPECT_FALSE(jobs.cancel(12345).has_value());
}

TEST(job_manager, a_failing_or_throwing_job_fails_alone) {
    fixture f;
    job_manager jobs(f.io, *f.st, 2, f.log);
    job_record bad = jobs.submit(
        spec("bad"), [](job_context&) -> job_outcome { return fail(error_code::bad_magic, "not an HPROF file"); });
    job_record thrown =
        jobs.submit(spec("thrown"), [](job_context&) -> job_outcome { throw std::runtime_error("boom"); });
    job_record good = jobs.submit(spec("good"), [](job_context&) -> job_outcome { return "ok"; });
    ASSERT_TRUE(f.run_until(
        [&] { return jobs.find(bad.id)->final() && jobs.find(thrown.id)->final() && jobs.find(good.id)->final(); }));
    EXPECT_EQ(jobs.find(bad.id)->state, job_state::failed);
    EXPECT_EQ(jobs.find(bad.id)->error_kind, "bad_input");
    EXPECT_EQ(jobs.find(bad.id)->error, "not an HPROF file");
    EXPECT_EQ(jobs.find(thrown.id)->state, job_state::failed);
    EXPECT_NE(jobs.find(thrown.id)->error.find("boom"), std::string::npos);
    EXPECT_EQ(jobs.find(good.id)->state, job_state::done);
}

TEST(job_manager, records_are_kept_in_the_store_and_ids_continue_after_a_restart) {
    fixture f;
    std::uint64_t last = 0;
    {
        job_manager jobs(f.io, *f.st, 1, f.log);
        for (const char* s : {"a", "b"})
            last = jobs.submit(spec(s), [](job_context&) -> job_outcome { return "e"; }).id;
        ASSERT_TRUE(f.run_until([&] { return jobs.find(last)->final(); }));
        EXPECT_TRUE(jobs.shutdown(std::chrono::seconds(10)));
    }
    f.st.reset();
    store_options o;
    o.root = f.dir.file("store");
    store_recovery rec;
    auto reopened = store::open(o, rec);
    ASSERT_TRUE(reopened.has_value());
    ASSERT_EQ(rec.jobs.size(), 2u);
    EXPECT_EQ(rec.jobs.back().state, job_state::done);
    job_manager jobs(f.io, **reopened, 1, f.log);
    jobs.restore(rec.jobs);
    EXPECT_EQ(jobs.list().size(), 2u);
    EXPECT_EQ(jobs.submit(spec("c"), [](job_context&) -> job_outcome { return "e"; }).id, last + 1);
}

TEST(job_manager, shutdown_cancels_what_waits_and_stops_what_runs) {
    fixture f;
    job_manager jobs(f.io, *f.st, 1, f.log);
    std::atomic<bool> started{false};
    job_record a = jobs.submit(spec("a"), [&](job_context& ctx) -> job_outcome {
        started = true;
        while (!ctx.cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        return fail(error_code::cancelled, "cancelled");
    });
    job_record b = jobs.submit(spec("b"), [](job_context&) -> job_outcome { return "e"; });
    ASSERT_TRUE(f.run_until([&] { return started.load(); }));
    EXPECT_TRUE(jobs.shutdown(std::chrono::seconds(30)));
    EXPECT_EQ(jobs.find(a.id)->state, job_state::cancelled);
    EXPECT_NE(jobs.find(a.id)->error.find("heapd stopped"), std::string::npos);
    EXPECT_EQ(jobs.find(b.id)->state, job_state::cancelled);
    EXPECT_EQ(jobs.submit(spec("late"), [](job_context&) -> job_outcome { return "e"; }).state, job_state::cancelled);
}

}  // namespace
}  // namespace heapd::daemon
