// The attach client against real JVMs: every operation on a JVM of our own user, a JVM of another
// user attached from root, forced protocol versions, a Java agent loaded; no trigger file left behind.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iostream>

#include "attach/attach_client.h"
#include "attach/attach_test_util.h"
#include "support/isolated_jvm.h"
#include "support/jvm_process.h"

namespace heapd::test {
namespace {

using attach::attach_options;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(attach_client, every_operation_on_a_jvm_of_our_user) {
    demo_jvm jvm({"-Xmx128m"});
    ASSERT_TRUE(jvm.ready());
    stopwatch first;
    auto dump = attach::thread_dump(jvm.pid());
    const double first_attach = first.seconds();
    ASSERT_TRUE(dump) << dump.error().message;
    EXPECT_EQ(dump->status, 0);
    EXPECT_TRUE(contains(dump->output, "Full thread dump")) << dump->output;
    EXPECT_TRUE(contains(dump->output, "\"demo-worker-\u00e9\u4e2d\"")) << dump->output;
    EXPECT_TRUE(contains(dump->output, "\"Attach Listener\""));
    stopwatch again;
    auto second = attach::thread_dump(jvm.pid(), {}, true);
    const double next_attach = again.seconds();
    ASSERT_TRUE(second) << second.error().message;
    EXPECT_TRUE(contains(second->output, "Locked ownable synchronizers"));  // the "l" flag
    std::cout << "attach latency: threaddump " << first_attach * 1000 << " ms with the listener to start, "
              << next_attach * 1000 << " ms with it running\n";

    auto histogram = attach::inspect_heap(jvm.pid());
    ASSERT_TRUE(histogram) << histogram.error().message;
    EXPECT_TRUE(contains(histogram->output, " 1000 ")) << histogram->output;  // Demo keeps 1000 sessions
    EXPECT_TRUE(contains(histogram->output, "Demo$Session"));

    auto version = attach::diagnostic_command(jvm.pid(), "VM.version");
    ASSERT_TRUE(version) << version.error().message;
    EXPECT_EQ(version->status, 0);
    EXPECT_TRUE(contains(version->output, "JDK 17")) << version->output;
    auto unknown = attach::diagnostic_command(jvm.pid(), "No.Such.Command");
    ASSERT_TRUE(unknown);
    EXPECT_NE(unknown->status, 0);
    EXPECT_TRUE(contains(unknown->output, "Unknown diagnostic command")) << unknown->output;

    auto properties = attach::system_properties(jvm.pid());
    ASSERT_TRUE(properties) << properties.error().message;
    EXPECT_TRUE(contains(properties->output, "java.specification.version=17")) << properties->output;
    auto agent = attach::agent_properties(jvm.pid());
    ASSERT_TRUE(agent) << agent.error().message;
    EXPECT_TRUE(contains(agent->output, "sun.java.command=Demo")) << agent->output;

    auto before = attach::print_flag(jvm.pid(), "HeapDumpOnOutOfMemoryError");
    ASSERT_TRUE(before);
    EXPECT_EQ(before->output, "-XX:-HeapDumpOnOutOfMemoryError\n");
    auto set = attach::set_flag(jvm.pid(), "HeapDumpOnOutOfMemoryError", "1");
    ASSERT_TRUE(set);
    EXPECT_EQ(set->status, 0) << set->output;
    EXPECT_EQ(attach::print_flag(jvm.pid(), "HeapDumpOnOutOfMemoryError")->output, "-XX:+HeapDumpOnOutOfMemoryError\n");
    auto fixed = attach::set_flag(jvm.pid(), "MaxHeapSize", "1");  // not manageable
    ASSERT_TRUE(fixed);
    EXPECT_NE(fixed->status, 0);
    EXPECT_TRUE(contains(fixed->output, "cannot be changed")) << fixed->output;
    EXPECT_EQ(trigger_files(jvm.pid()), std::vector<std::string>{});
}

TEST(attach_client, output_can_be_taken_as_it_arrives) {
    demo_jvm jvm({"-Xmx64m"});
    ASSERT_TRUE(jvm.ready());
    attach_options options;
    std::string seen;
    options.on_output = [&seen](std::string_view s) { seen.append(s); };
    auto r = attach::thread_dump(jvm.pid(), options);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_TRUE(r->output.empty());
    EXPECT_TRUE(contains(seen, "Full thread dump"));
}

TEST(attach_client, protocol_versions_on_jdk17) {
    demo_jvm jvm({"-Xmx64m"});
    ASSERT_TRUE(jvm.ready());
    auto automatic = attach::diagnostic_command(jvm.pid(), "VM.uptime");
    ASSERT_TRUE(automatic) << automatic.error().message;
    EXPECT_EQ(automatic->protocol, 1);  // JDK 17 does not know getversion
    attach_options v1;
    v1.protocol = attach::protocol_choice::v1;
    auto forced = attach::diagnostic_command(jvm.pid(), "VM.uptime", v1);
    ASSERT_TRUE(forced) << forced.error().message;
    EXPECT_EQ(forced->status, 0);
    attach_options v2;
    v2.protocol = attach::protocol_choice::v2;
    auto refused = attach::diagnostic_command(jvm.pid(), "VM.uptime", v2);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, error_code::protocol);
    // Four arguments need v2, which JDK 17 does not offer.
    auto many = attach::attach_command(jvm.pid(), {"threaddump", {"", "", "", ""}});
    ASSERT_FALSE(many);
    EXPECT_EQ(many.error().code, error_code::protocol);
}

TEST(attach_client, loads_a_java_agent) {
    demo_jvm jvm({"-Xmx64m"});
    ASSERT_TRUE(jvm.ready());
    scratch_dir dir;
    std::ofstream(dir.file("manifest.txt")) << "Agent-Class: AttachAgent\n";
    auto jar = run_command(
        {"jar", "cfm", dir.file("agent.jar"), dir.file("manifest.txt"), "-C", test_classes_dir(), "AttachAgent.class"});
    ASSERT_EQ(jar.exit_code, 0) << jar.err;
    auto loaded = attach::load_agent(jvm.pid(), "instrument", false, dir.file("agent.jar") + "=hello");
    ASSERT_TRUE(loaded) << loaded.error().message;
    EXPECT_TRUE(loaded->loaded()) << loaded->reply.output;
    EXPECT_EQ(loaded->agent_code, 0);
    EXPECT_TRUE(contains(attach::system_properties(jvm.pid())->output, "heapd.agent.options=hello"));
    auto failed = attach::load_agent(jvm.pid(), "instrument", false, dir.file("agent.jar") + "=fail");
    ASSERT_TRUE(failed) << failed.error().message;
    EXPECT_FALSE(failed->loaded());
    ASSERT_TRUE(failed->agent_code);
    EXPECT_NE(*failed->agent_code, 0);
    auto missing = attach::load_agent(jvm.pid(), dir.file("no-such-agent.so"), true, "");
    ASSERT_TRUE(missing) << missing.error().message;
    EXPECT_FALSE(missing->loaded());
    EXPECT_TRUE(contains(missing->reply.output, "was not loaded")) << missing->reply.output;
}

TEST(attach_client, a_jvm_of_another_user_from_root) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root";
    temp_user user;
    ASSERT_TRUE(user.ok());
    isolated_jvm jvm(java_main{"AttachTarget"}, {"-Xmx64m"}, {}, isolation{&user, false, {}});
    ASSERT_TRUE(jvm.ready());
    auto dump = attach::thread_dump(jvm.pid());
    ASSERT_TRUE(dump) << dump.error().message;
    EXPECT_EQ(dump->status, 0);
    EXPECT_TRUE(contains(dump->output, "AttachTarget.main"));
    EXPECT_EQ(::geteuid(), 0u);  // the credentials changed in the helper process only
    EXPECT_EQ(trigger_files(jvm.pid()), std::vector<std::string>{});
    // The socket is the JVM's.
    struct stat st {};
    ASSERT_EQ(::stat(("/tmp/.java_pid" + std::to_string(jvm.pid())).c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, user.uid());
}

}  // namespace
}  // namespace heapd::test
