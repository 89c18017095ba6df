// Dump jobs end to end: the real daemon on a temporary socket and store dumps a real JVM through
// attach, keeps the dump (root and the store's group, 0640) with its metadata, analyzes it, and
// heapctl shows the JVMs, the dump's report and the latest report of a pid; another user may
// neither see nor dump root's JVM; one dump per JVM at a time.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "formats/wire/protocol.h"
#include "support/isolated_jvm.h"
#include "support/jvm_process.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

using wire::json;

TEST(serve_dump, dumps_a_jvm_keeps_the_dump_and_reports_it_by_pid) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    demo_jvm jvm(java_main{"Sessions"}, {"-Xmx256m"}, {"20000"});
    ASSERT_TRUE(jvm.ready());
    const std::string pid = std::to_string(jvm.pid());

    auto jvms = run_heapctl(d, {"jvms", "--json"});
    ASSERT_EQ(jvms.exit_code, 0) << jvms.err;
    bool listed = false;
    for (const json& j : json::parse(jvms.out))
        if (j["pid"] == jvm.pid()) {
            listed = true;
            EXPECT_EQ(j["main_class"], "Sessions");
            EXPECT_GT(j["heap"]["used"].get<long long>(), 0);
        }
    EXPECT_TRUE(listed) << jvms.out;
    auto jvms_text = run_heapctl(d, {"jvms"});
    EXPECT_NE(jvms_text.out.find(pid), std::string::npos) << jvms_text.out;

    // No dump yet: report PID says so and how to take one.
    auto none = run_heapctl(d, {"report", pid});
    EXPECT_EQ(none.exit_code, 5) << none.out << none.err;
    EXPECT_NE(none.err.find("--fresh"), std::string::npos) << none.err;

    auto dumped = run_heapctl(d, {"dump", pid, "--wait"});
    ASSERT_EQ(dumped.exit_code, 0) << dumped.err << d.log();
    EXPECT_NE(dumped.out.find("Sessions (static LEAK)"), std::string::npos) << dumped.out;

    auto listed_dumps = json::parse(run_heapctl(d, {"dumps", "--json"}).out);
    ASSERT_EQ(listed_dumps.size(), 1u);
    const json& m = listed_dumps[0];
    EXPECT_EQ(m["pid"], jvm.pid());
    EXPECT_EQ(m["trigger"], "request");
    EXPECT_EQ(m["source"], "dump");
    EXPECT_EQ(m["has_dump"], true);
    EXPECT_NE(m["command_line"].get<std::string>().find("Sessions"), std::string::npos) << m;
    EXPECT_FALSE(m["jvm"].get<std::string>().empty()) << m;
    EXPECT_GT(m["file_bytes"].get<long long>(), 1000000);
    struct stat st {};
    const std::string file = d.store() + "/entries/" + m["id"].get<std::string>() + "/dump.hprof";
    ASSERT_EQ(::stat(file.c_str(), &st), 0) << file;
    EXPECT_EQ(st.st_mode & 0777, 0640u);
    EXPECT_EQ(st.st_uid, 0u);

    // The latest dump's report by pid, and a fresh one.
    auto by_pid = run_heapctl(d, {"report", pid});
    ASSERT_EQ(by_pid.exit_code, 0) << by_pid.err;
    EXPECT_NE(by_pid.out.find("Sessions (static LEAK)"), std::string::npos) << by_pid.out;
    EXPECT_NE(by_pid.out.find("Kept as dump " + m["id"].get<std::string>()), std::string::npos) << by_pid.out;
    auto fresh = run_heapctl(d, {"report", pid, "--fresh", "--json"});
    ASSERT_EQ(fresh.exit_code, 0) << fresh.err;
    EXPECT_NE(json::parse(fresh.out)["leak_suspects"]["suspects"].at(0)["path"]["text"].get<std::string>().find(
                  "Sessions (static LEAK)"),
              std::string::npos);
    EXPECT_EQ(json::parse(run_heapctl(d, {"dumps", "--json"}).out).size(), 2u);

    // Without --wait: the job's id at once; --all dumps unreachable objects too.
    auto started = run_heapctl(d, {"dump", pid, "--all", "--json"});
    ASSERT_EQ(started.exit_code, 0) << started.err;
    EXPECT_EQ(json::parse(started.out)["job"]["kind"], "dump");
}

TEST(serve_dump, one_dump_per_jvm_at_a_time_and_unknown_pids_refused) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    demo_jvm jvm(java_main{"Sessions"}, {"-Xmx256m"}, {"1000"});
    ASSERT_TRUE(jvm.ready());
    // Both requests in one write: the daemon reads them together, before the first job can end.
    raw_client c(d.socket());
    ASSERT_TRUE(c.connected());
    auto a = wire::encode_request({1, "dump", {{"pid", jvm.pid()}}});
    auto b = wire::encode_request({2, "dump", {{"pid", jvm.pid()}}});
    ASSERT_TRUE(a && b);
    ASSERT_TRUE(c.send_bytes(*a + *b));
    auto first = c.read_reply();
    auto second = c.read_reply();
    ASSERT_TRUE(first && second);
    EXPECT_EQ(first->kind, wire::reply_kind::result);
    ASSERT_EQ(second->kind, wire::reply_kind::error);
    EXPECT_EQ(second->error.kind, wire::error_kind::busy);
    EXPECT_NE(second->error.message.find("already under way"), std::string::npos) << second->error.message;

    auto missing = run_heapctl(d, {"dump", "999999999"});
    EXPECT_EQ(missing.exit_code, 5) << missing.err;

    // The kind of OutOfMemoryError heapd's agent names: one of its three, with trigger oom only, in
    // a bounded line.
    const wire::json refused[] = {
        {{"pid", jvm.pid()}, {"trigger", "oom"}, {"oom_kind", "heap"}},
        {{"pid", jvm.pid()}, {"oom_kind", "thrown"}},
        {{"pid", jvm.pid()}, {"trigger", "oom"}, {"oom_kind", "thrown"}, {"oom_error", std::string(1025, 'x')}},
        {{"pid", jvm.pid()}, {"trigger", "oom"}, {"oom_kind", 3}},
    };
    std::uint64_t id = 10;
    for (const wire::json& args : refused) {
        ASSERT_TRUE(c.send_request({++id, "dump", args}));
        auto r = c.read_reply();
        ASSERT_TRUE(r) << args;
        ASSERT_EQ(r->kind, wire::reply_kind::error) << args;
        EXPECT_EQ(r->error.kind, wire::error_kind::bad_request) << args;
    }
}

TEST(serve_dump, another_user_neither_sees_nor_dumps_roots_jvm) {
    temp_user other;
    ASSERT_TRUE(other.ok());
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    demo_jvm jvm(java_main{"Sessions"}, {"-Xmx256m"}, {"1000"});
    ASSERT_TRUE(jvm.ready());
    const std::string pid = std::to_string(jvm.pid());
    auto jvms = run_heapctl(d, {"jvms", "--json"}, &other);
    ASSERT_EQ(jvms.exit_code, 0) << jvms.err;
    for (const json& j : json::parse(jvms.out)) EXPECT_NE(j["pid"], jvm.pid()) << jvms.out;
    auto refused = run_heapctl(d, {"dump", pid, "--wait"}, &other);
    EXPECT_EQ(refused.exit_code, 4) << refused.out << refused.err;
    EXPECT_NE(refused.err.find("another user"), std::string::npos) << refused.err;
    auto fresh = run_heapctl(d, {"report", pid, "--fresh"}, &other);
    EXPECT_EQ(fresh.exit_code, 4) << fresh.err;
    EXPECT_TRUE(json::parse(run_heapctl(d, {"jobs", "--json"}).out).empty());
}

// heapctl run inside a container (nsenter into the JVM's pid and mount namespaces, the socket's
// directory shared as a volume) sees its container's JVM by the pid it has there, and dumps and
// reports it by that pid; on the host the same dump is the host pid's.
TEST(serve_dump, heapctl_in_a_container_names_its_jvms_by_their_pids_there) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    demo_jvm host_jvm(java_main{"Sessions"}, {"-Xmx128m"}, {"100"});
    isolated_jvm jvm(java_main{"Sessions"}, {"-Xmx128m"}, {"20000"}, isolation{nullptr, true, {}, {d.dir()}});
    ASSERT_TRUE(host_jvm.ready() && jvm.ready());
    ASSERT_EQ(jvm.ns_pid(), 1);
    auto inside = [&](std::vector<std::string> args) {
        args.insert(args.begin(), {"nsenter", "--target", std::to_string(jvm.pid()), "--pid", "--mount", "--",
                                   heapctl_binary(), "--socket", d.socket()});
        return run_command(args);
    };
    auto jvms = inside({"jvms", "--json"});
    ASSERT_EQ(jvms.exit_code, 0) << jvms.err << d.log();
    json listed = json::parse(jvms.out);
    ASSERT_EQ(listed.size(), 1u) << listed;  // the host's JVM is not the container's
    EXPECT_EQ(listed[0]["pid"], 1);
    EXPECT_EQ(listed[0]["main_class"], "Sessions");

    auto dumped = inside({"dump", "1", "--wait"});
    ASSERT_EQ(dumped.exit_code, 0) << dumped.err << d.log();
    json dumps = json::parse(run_heapctl(d, {"dumps", "--json"}).out);
    ASSERT_EQ(dumps.size(), 1u);
    EXPECT_EQ(dumps[0]["pid"], jvm.pid());
    auto report = inside({"report", "1"});
    ASSERT_EQ(report.exit_code, 0) << report.err;
    EXPECT_NE(report.out.find("Sessions$Session"), std::string::npos) << report.out;
    EXPECT_EQ(run_heapctl(d, {"report", std::to_string(jvm.pid())}).exit_code, 0);
    // Pids the container does not have name nothing, even when the host has them.
    auto host_pid = inside({"dump", std::to_string(host_jvm.pid()), "--json"});
    EXPECT_EQ(host_pid.exit_code, 5) << host_pid.out << host_pid.err;
}

}  // namespace
}  // namespace heapd::test
