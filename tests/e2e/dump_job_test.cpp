// Dump jobs when things go wrong, with the real daemon and real JVMs: the daemon killed (kill -9)
// while a JVM writes its dump restarts serving, with the job failed and only complete dumps in
// the store; a dump that would not fit in the store's file system is refused before it starts,
// with a clear error.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "formats/wire/protocol.h"
#include "support/jvm_process.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

using wire::error_kind;
using wire::json;
using wire::reply_kind;

TEST(dump_job, killed_while_a_jvm_dumps_it_restarts_with_only_complete_dumps) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    scratch_dir dir;
    // About 130 MB of live objects: the JVM takes a good part of a second to write them.
    demo_jvm jvm(java_main{"Leaky"}, {"-Xmx1g", "-Xms1g"}, {dir.file("trigger"), "4000000"});
    ASSERT_TRUE(jvm.ready());
    const std::string pid = std::to_string(jvm.pid());
    // One complete dump first: it must survive the crash.
    auto kept = run_heapctl(d, {"dump", pid, "--wait", "--json"});
    ASSERT_EQ(kept.exit_code, 0) << kept.err << d.log();
    auto first = json::parse(run_heapctl(d, {"dumps", "--json"}).out);
    ASSERT_EQ(first.size(), 1u);
    const std::string kept_id = first[0]["id"];
    ASSERT_TRUE(leaky_grow(dir.file("trigger")));

    raw_client c(d.socket());
    ASSERT_TRUE(c.send_request({1, "dump", {{"pid", jvm.pid()}, {"wait", true}}}));
    std::optional<wire::reply> r;
    std::uint64_t job = 0;
    while ((r = c.read_reply()) && r->kind == reply_kind::progress) {
        job = r->progress.job;
        if (r->progress.phase == "dump") break;  // the JVM is writing its dump into the store
    }
    ASSERT_TRUE(r && r->kind == reply_kind::progress) << "the dump ended before it could be interrupted";
    EXPECT_EQ(d.stop(SIGKILL), 128 + SIGKILL);

    // The JVM finishes (or abandons) its dump and answers again.
    bool answers = false;
    for (int i = 0; i < 60 && !(answers = jvm.jcmd({"VM.version"}).exit_code == 0); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    ASSERT_TRUE(answers);

    ASSERT_TRUE(d.start()) << d.log();
    EXPECT_FALSE(has_temp_files(d.store()));
    EXPECT_NE(d.log().find("1 jobs were interrupted"), std::string::npos) << d.log();
    auto jobs = json::parse(run_heapctl(d, {"jobs", "--json"}).out);
    bool failed = false;
    for (const json& j : jobs)
        if (j["id"] == job) {
            failed = j["state"] == "failed";
            EXPECT_NE(j["error"].get<std::string>().find("interrupted"), std::string::npos) << j;
        }
    EXPECT_TRUE(failed) << jobs.dump(1);
    // Only the complete dump is there, and it still reads.
    auto dumps = json::parse(run_heapctl(d, {"dumps", "--json"}).out);
    ASSERT_EQ(dumps.size(), 1u) << dumps.dump(1);
    const std::string id = dumps[0]["id"];
    EXPECT_EQ(id, kept_id);
    for (const auto& e : std::filesystem::directory_iterator(d.store() + "/entries"))
        EXPECT_EQ(e.path().filename().string(), id) << "only the complete entry is kept";
    EXPECT_EQ(run_heapctl(d, {"report", id}).exit_code, 0);
    // And the same JVM can be dumped again at once.
    auto again = run_heapctl(d, {"dump", pid, "--wait"});
    EXPECT_EQ(again.exit_code, 0) << again.err << d.log();
    EXPECT_NE(again.out.find("Leaky"), std::string::npos);
    EXPECT_FALSE(has_temp_files(d.store()));
}

TEST(dump_job, a_dump_that_would_not_fit_is_refused_before_it_starts) {
    // The store on a 4 MiB tmpfs in a mount namespace of the daemon's own: it goes with the daemon.
    serve_process d({}, small_store_launcher("4m"));
    ASSERT_TRUE(d.ready()) << d.log();
    scratch_dir dir;
    demo_jvm jvm(java_main{"Leaky"}, {"-Xmx256m", "-Xms256m"}, {dir.file("trigger"), "1000000"});
    ASSERT_TRUE(jvm.ready());
    ASSERT_TRUE(leaky_grow(dir.file("trigger")));  // some 40 MB in use: ten times the store's room
    auto refused = run_heapctl(d, {"dump", std::to_string(jvm.pid()), "--wait"});
    EXPECT_EQ(refused.exit_code, 6) << refused.out << refused.err;
    EXPECT_NE(refused.err.find("not enough free space in " + d.store()), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("the heap dump of pid " + std::to_string(jvm.pid())), std::string::npos) << refused.err;
    EXPECT_TRUE(json::parse(run_heapctl(d, {"dumps", "--json"}).out).empty());
    EXPECT_FALSE(has_temp_files(d.store()));
    // The JVM was never asked to dump: no attach listener was started in it.
    EXPECT_FALSE(std::filesystem::exists("/tmp/.java_pid" + std::to_string(jvm.pid())));
}

}  // namespace
}  // namespace heapd::test
