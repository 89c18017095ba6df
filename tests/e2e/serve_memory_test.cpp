// heapctl memory and heapctl jvms through the daemon: a user sees where the memory of their own JVM
// goes against the limit of the real memory cgroup it runs in; another user may not look.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/isolated_jvm.h"
#include "support/jvm_process.h"
#include "support/oom_scenario.h"
#include "support/serve_process.h"
#include "support/test_cgroup.h"

namespace heapd {
namespace {

using test::isolated_jvm;
using test::isolation;
using test::java_main;
using test::run_heapctl;
using test::serve_process;
using test::temp_user;

constexpr long long mib = 1 << 20;

TEST(serve_memory, a_user_sees_their_jvms_memory_against_its_cgroups_limit) {
    test::test_cgroup cgroup("memory");
    if (!cgroup.ok()) GTEST_SKIP() << "no writable cgroup v1 memory hierarchy here";
    ASSERT_TRUE(cgroup.set("memory.limit_in_bytes", std::to_string(400 * mib)));
    serve_process d;
    ASSERT_TRUE(d.ready());
    temp_user owner, other;
    ASSERT_TRUE(owner.ok() && other.ok());
    isolated_jvm jvm(java_main{"OffHeap"}, {"-Xmx64m"}, {"40", "10"}, isolation{&owner, false});
    ASSERT_TRUE(jvm.ready());
    ASSERT_TRUE(cgroup.add(jvm.pid()));
    const std::string pid = std::to_string(jvm.pid());

    auto denied = run_heapctl(d, {"memory", pid}, &other);
    EXPECT_EQ(denied.exit_code, 4) << denied.out << denied.err;
    EXPECT_NE(denied.err.find("belongs to another user"), std::string::npos) << denied.err;

    auto json = run_heapctl(d, {"memory", pid, "--json"}, &owner);
    ASSERT_EQ(json.exit_code, 0) << json.err;
    const auto b = nlohmann::json::parse(json.out, nullptr, false);
    ASSERT_TRUE(b.is_object()) << json.out;
    EXPECT_EQ(b["pid"], jvm.pid());
    EXPECT_EQ(b["limit"]["bytes"], 400 * mib);
    EXPECT_EQ(b["limit"]["by_cgroup"], true);
    EXPECT_EQ(b["limit"]["source"], "cgroup v1 " + cgroup.path());
    long long other_native = 0;
    for (const auto& p : b["parts"])
        if (p["name"] == "other_native") other_native = p["resident"];
    EXPECT_GE(other_native, 40 * mib);  // the direct buffers
    EXPECT_TRUE(b["parts"][0].contains("resident")) << "the daemon asked the JVM where its heap lies";

    auto text = run_heapctl(d, {"memory", pid}, &owner);
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("JVM " + pid + ": "), std::string::npos) << text.out;
    EXPECT_NE(text.out.find(" of 400 MiB (cgroup v1 " + cgroup.path() + ")"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("Other native"), std::string::npos) << text.out;

    // The JVM table shows resident memory against the cgroup's limit.
    auto jvms = run_heapctl(d, {"jvms"}, &owner);
    ASSERT_EQ(jvms.exit_code, 0) << jvms.err;
    EXPECT_NE(jvms.out.find("RSS/LIMIT"), std::string::npos) << jvms.out;
    EXPECT_NE(jvms.out.find("/400 MiB "), std::string::npos) << jvms.out;
    auto listed = run_heapctl(d, {"jvms", "--json"}, &owner);
    const auto rows = nlohmann::json::parse(listed.out, nullptr, false);
    ASSERT_TRUE(rows.is_array() && rows.size() == 1) << listed.out;
    EXPECT_EQ(rows[0]["memory"]["limit"], 400 * mib);
    EXPECT_GT(rows[0]["memory"]["resident"].get<long long>(), 40 * mib);

    auto missing = run_heapctl(d, {"memory", "x"}, &owner);
    EXPECT_EQ(missing.exit_code, 1);
}

}  // namespace
}  // namespace heapd
