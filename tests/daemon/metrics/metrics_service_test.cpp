// The metrics thread: snapshots for requests delivered on the io_context thread, with the daemon's
// jobs and real JVMs in them; the textfile written at once, moved, and removed as its options change.
#include "daemon/metrics/metrics_service.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <spdlog/sinks/ostream_sink.h>
#include <boost/asio/io_context.hpp>

#include "support/jvm_process.h"
#include "support/prometheus_text.h"

namespace heapd::daemon {
namespace {

namespace fs = std::filesystem;
using test::scratch_dir;

// A store, a job manager, counters fed by it, and the metrics service over them.
struct fixture {
    scratch_dir dir;
    std::ostringstream log_text;
    std::shared_ptr<spdlog::logger> log =
        std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log_text));
    boost::asio::io_context io;
    std::unique_ptr<store> st;
    std::unique_ptr<job_manager> jobs;
    std::shared_ptr<metrics_counters> counters = std::make_shared<metrics_counters>();
    std::unique_ptr<metrics_service> service;

    explicit fixture(metrics_options options = {}) {
        store_options o;
        o.root = dir.file("store");
        store_recovery rec;
        st = std::move(*store::open(o, rec));
        jobs = std::make_unique<job_manager>(io, *st, 1, log);
        jobs->observe([c = counters](const job_record& r) { c->job_changed(r); });
        service =
            std::make_unique<metrics_service>(io, metrics_sources{*st, *jobs, counters, "9.9.9", 1234.5}, options, log);
    }
    ~fixture() { service->stop(); }
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

bool exists(const std::string& path) {
    std::error_code ec;
    return fs::exists(path, ec);
}

TEST(metrics_service, a_request_gets_its_snapshot_on_the_io_thread_with_jobs_and_jvms) {
    test::demo_jvm jvm({"-Xmx64m"}, {});
    ASSERT_TRUE(jvm.ready());
    fixture f;
    f.service->start();
    // A job that fails, counted by the counters the job manager feeds.
    job_record spec;
    spec.kind = "dump";
    spec.trigger = "request";
    bool ended = false;  // the job's listener hears of the end after the counters
    f.jobs->submit(
        spec, [](job_context&) -> job_outcome { return fail(error_code::not_responding, "no"); },
        [&](const job_record& r) { ended = ended || r.final(); });
    ASSERT_TRUE(f.run_until([&] { return ended; }));

    const auto io_thread = std::this_thread::get_id();
    metrics_service::snapshot_ptr got;
    bool on_io_thread = false;
    f.service->gather([&](metrics_service::snapshot_ptr s) {
        on_io_thread = std::this_thread::get_id() == io_thread;
        got = std::move(s);
    });
    ASSERT_TRUE(f.run_until([&] { return got != nullptr; }));
    EXPECT_TRUE(on_io_thread);
    EXPECT_EQ(got->daemon.version, "9.9.9");
    EXPECT_EQ(got->daemon.start_time_seconds, 1234.5);
    EXPECT_EQ(got->daemon.dump_failures.at("request"), 1u);
    bool found = false;
    for (const jvm_metrics& j : got->jvms) found = found || j.pid == jvm.pid();
    EXPECT_TRUE(found) << "pid " << jvm.pid() << " not among " << got->jvms.size() << " JVMs";
}

TEST(metrics_service, the_textfile_follows_its_options) {
    scratch_dir out;
    const std::string a = out.file("a.prom"), b = out.file("b.prom");
    fixture f({a, std::chrono::seconds(3600)});
    f.service->start();
    // Written at once, not after the hour.
    ASSERT_TRUE(f.run_until([&] { return exists(a); })) << f.log_text.str();
    struct stat st {};
    ASSERT_EQ(::stat(a.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0644u);
    std::ifstream in(a);
    std::stringstream text;
    text << in.rdbuf();
    auto e = test::parse_prometheus_text(text.str());
    ASSERT_TRUE(e) << e.error();
    EXPECT_EQ(e->value("heapd_build_info", {{"version", "9.9.9"}}), 1);

    // A new path: written at once, the old file removed.
    f.service->set_options({b, std::chrono::seconds(3600)});
    ASSERT_TRUE(f.run_until([&] { return exists(b) && !exists(a); })) << f.log_text.str();
    EXPECT_EQ(f.service->options().textfile, b);
    // No path: nothing written, the last file removed.
    f.service->set_options({"", std::chrono::seconds(30)});
    ASSERT_TRUE(f.run_until([&] { return !exists(b); })) << f.log_text.str();

    // A directory that does not exist: a warning, once, and the daemon goes on.
    const std::string nowhere = out.file("missing/c.prom");
    f.service->set_options({nowhere, std::chrono::seconds(1)});
    ASSERT_TRUE(f.run_until([&] { return f.log_text.str().find("missing") != std::string::npos; }));
    metrics_service::snapshot_ptr got;
    f.service->gather([&](metrics_service::snapshot_ptr s) { got = std::move(s); });
    ASSERT_TRUE(f.run_until([&] { return got != nullptr; }));
}

}  // namespace
}  // namespace heapd::daemon
