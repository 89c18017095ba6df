// Dumps written by the serviceability agent (jhsdb jmap --binaryheap, the way to dump a JVM whose
// attach listener cannot answer) of a real JVM: they mark no class as a GC root, and the report must
// still name the leak's class and static field, as for a dump HotSpot writes itself. And the
// daemon's dump of a JVM that cannot answer attach: a snapshot from outside stands in.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/isolated_jvm.h"
#include "support/jvm_process.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

TEST(sa_dump, the_leak_is_named_by_its_class_and_static_field) {
    // Attach is off: only the serviceability agent can dump this JVM.
    demo_jvm jvm(java_main{"Sessions"}, {"-Xmx256m", "-XX:+DisableAttachMechanism"}, {"20000"});
    ASSERT_TRUE(jvm.ready());
    scratch_dir dir;
    const std::string file = dir.file("sa.hprof");
    auto sa = run_command({"jhsdb", "jmap", "--binaryheap", "--dumpfile", file, "--pid", std::to_string(jvm.pid())});
    ASSERT_EQ(sa.exit_code, 0) << sa.out << sa.err;

    auto json = run_command({heapd_binary(), "analyze", "--json", "--no-index", file});
    ASSERT_EQ(json.exit_code, 0) << json.err;
    const nlohmann::json report = nlohmann::json::parse(json.out);
    const nlohmann::json& summary = report.at("summary");
    EXPECT_EQ(summary.at("writer"), "serviceability agent");
    EXPECT_FALSE(summary.at("gc_roots").contains("sticky_class")) << summary.at("gc_roots");
    EXPECT_GT(summary.at("class_roots_inferred").get<std::uint64_t>(), 100u);

    auto text = run_command({heapd_binary(), "analyze", "--no-index", file});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    // The first suspect is the list the static field holds, not the application class loader.
    const auto suspects = text.out.find("Leak suspects");
    ASSERT_NE(suspects, std::string::npos) << text.out;
    const std::string first = text.out.substr(
        suspects, std::min(text.out.find("\n  2. ", suspects), text.out.find("\nReachability")) - suspects);
    EXPECT_NE(first.find("retained by one java.util.ArrayList"), std::string::npos) << first;
    EXPECT_NE(first.find("20,000 Sessions$Session"), std::string::npos) << first;
    EXPECT_NE(first.find("path: (sticky_class root) class Sessions (static LEAK)"), std::string::npos) << first;
    EXPECT_EQ(first.find("AppClassLoader"), std::string::npos) << first;
}

// heapctl dump of the Sessions JVM pid, which takes no attach: the report names the leak, the stored
// dump says it was taken from outside because attach failed, and the JVM goes on.
void expect_dumped_from_outside(const serve_process& d, pid_t pid) {
    auto dumped = run_heapctl(d, {"dump", std::to_string(pid), "--wait"});
    ASSERT_EQ(dumped.exit_code, 0) << dumped.err << d.log();
    EXPECT_NE(dumped.out.find("path: (sticky_class root) class Sessions (static LEAK)"), std::string::npos)
        << dumped.out;
    const auto dumps = nlohmann::json::parse(run_heapctl(d, {"dumps", "--json"}).out);
    ASSERT_EQ(dumps.size(), 1u);
    const std::string file = dumps[0].value("file", "");
    EXPECT_NE(file.find("attach failed: "), std::string::npos) << dumps[0];
    EXPECT_NE(file.find("core by gdb, HPROF by jhsdb"), std::string::npos) << dumps[0];
    EXPECT_EQ(dumps[0]["pid"], pid);
    EXPECT_EQ(::kill(pid, 0), 0);
}

TEST(sa_dump, the_daemon_dumps_a_jvm_with_attach_disabled_from_outside_and_reports_the_leak) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    demo_jvm jvm(java_main{"Sessions"}, {"-Xmx256m", "-XX:+DisableAttachMechanism"}, {"20000"});
    ASSERT_TRUE(jvm.ready());
    expect_dumped_from_outside(d, jvm.pid());
}

// The same for a JVM in a container, run as another user from a JDK only the container has: gdb
// (the host's) takes the core, and the container's jhsdb, in its mount namespace, converts it.
TEST(sa_dump, the_daemon_dumps_a_container_jvm_that_takes_no_attach_with_the_jdk_in_the_container) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    temp_user user;
    ASSERT_TRUE(user.ok());
    isolation how{&user, true};
    how.own_jdk = true;
    isolated_jvm jvm(java_main{"Sessions"}, {"-Xmx256m", "-XX:+DisableAttachMechanism"}, {"20000"}, how);
    ASSERT_TRUE(jvm.ready());
    ASSERT_FALSE(std::filesystem::exists("/tmp/jdk/bin/jhsdb"));  // not on the host
    expect_dumped_from_outside(d, jvm.pid());
}

}  // namespace
}  // namespace heapd::test
