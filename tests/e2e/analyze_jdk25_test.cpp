// heapd analyze on JDK 25, the current LTS: its histogram equals jcmd GC.class_histogram of the same
// idle JVM under the default object layout, compact object headers (JEP 519) and ZGC, which writes
// each page downwards; G1's filler objects are set apart as jcmd sets them apart. Skipped where the
// machine has no JDK 25.
#include <gtest/gtest.h>

#include "support/jcmd_histogram.h"
#include "support/jvm_process.h"

namespace heapd::test {
namespace {

// Runs SessionCache on JDK 25 with flags, dumps it idle, and compares; returns heapd's report.
nlohmann::json expect_jcmd_histogram(const std::vector<std::string>& flags, const std::set<std::string>& except = {}) {
    demo_jvm jvm(java_main{"SessionCache", jdk25_bin()}, flags, {"20000"});
    EXPECT_TRUE(jvm.ready());
    if (!jvm.ready()) return {};
    scratch_dir dir;
    const histogram jcmd = stable_dump(jvm, dir.file("heap.hprof"));
    const nlohmann::json report = analyze_json(dir.file("heap.hprof"));
    EXPECT_EQ(differences(jcmd, ours(report), except), "");
    // What is set apart is what jcmd sets apart, and is no more than the garbage.
    const auto fillers = jcmd.count("jdk.internal.vm.FillerElement[]") ? jcmd.at("jdk.internal.vm.FillerElement[]")
                                                                       : std::pair<std::uint64_t, std::uint64_t>{};
    const auto& reach = report.at("reachability");
    if (except.empty()) {
        EXPECT_EQ(reach.at("filler_objects"), fillers.first);
        EXPECT_EQ(reach.at("filler_bytes"), fillers.second);
    }
    EXPECT_LE(reach.at("filler_objects"), reach.at("unreachable_objects"));
    EXPECT_EQ(report.at("summary").at("field_rules"), "JDK 19 and later");
    return report;
}

class analyze_jdk25 : public ::testing::Test {
protected:
    void SetUp() override {
        if (jdk25_bin().empty()) GTEST_SKIP() << "no JDK 25 (/usr/lib/jvm/temurin-25-jdk-amd64)";
    }
};

// CDS off throughout: with it on, the archive's mirrors of classes never loaded are in the heap
// but not in the dump (analyze_command_test), and so are the archive's dead empty int[].
TEST_F(analyze_jdk25, histogram_equals_jcmd_with_g1_and_its_fillers_set_apart) {
    const nlohmann::json r = expect_jcmd_histogram({"-XX:+UseG1GC", "-Xshare:off"});
    EXPECT_EQ(r.at("summary").at("layout"), "64-bit, compressed oops");
}

TEST_F(analyze_jdk25, histogram_equals_jcmd_with_compact_object_headers) {
    const nlohmann::json r = expect_jcmd_histogram({"-XX:+UseCompactObjectHeaders", "-Xshare:off"});
    EXPECT_EQ(r.at("summary").at("layout"), "64-bit, compact object headers, compressed oops");
    EXPECT_EQ(r.at("summary").at("layout_inferred"), true);
}

TEST_F(analyze_jdk25, histogram_equals_jcmd_with_compact_headers_without_compressed_oops) {
    const nlohmann::json r =
        expect_jcmd_histogram({"-XX:+UseCompactObjectHeaders", "-XX:-UseCompressedOops", "-Xshare:off"});
    EXPECT_EQ(r.at("summary").at("layout"), "64-bit, compact object headers, uncompressed oops");
}

TEST_F(analyze_jdk25, histogram_equals_jcmd_with_zgc_and_compact_headers) {
    const nlohmann::json r = expect_jcmd_histogram({"-XX:+UseZGC", "-XX:+UseCompactObjectHeaders", "-Xshare:off"});
    EXPECT_EQ(r.at("summary").at("layout"), "64-bit, compact object headers, uncompressed oops");
    EXPECT_EQ(r.at("summary").at("layout_inferred"), true);
}

// With CDS on (the default) the archive's mirrors make jcmd's java.lang.Class row larger, and the
// archive's dead int[0] count with the fillers: int[] and fillers together still agree.
TEST_F(analyze_jdk25, with_class_data_sharing_only_mirrors_and_the_archives_dead_arrays_differ) {
    demo_jvm jvm(java_main{"SessionCache", jdk25_bin()}, {}, {"20000"});
    ASSERT_TRUE(jvm.ready());
    scratch_dir dir;
    histogram jcmd = stable_dump(jvm, dir.file("heap.hprof"));
    histogram mine = ours(analyze_json(dir.file("heap.hprof")));
    const std::set<std::string> apart = {"java.lang.Class", "int[]", "jdk.internal.vm.FillerElement[]"};
    EXPECT_EQ(differences(jcmd, mine, apart), "");
    auto both = [](histogram& h) {
        return std::pair{h["int[]"].first + h["jdk.internal.vm.FillerElement[]"].first,
                         h["int[]"].second + h["jdk.internal.vm.FillerElement[]"].second};
    };
    EXPECT_EQ(both(jcmd), both(mine));
}

}  // namespace
}  // namespace heapd::test
