// heapd analyze against real JVMs: its histogram must equal jcmd GC.class_histogram of the same
// idle JVM, class for class and byte for byte, and its threads must match the JVM's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "support/jcmd_histogram.h"
#include "support/jvm_process.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

void expect_same_histogram(const std::vector<std::string>& flags) {
    demo_jvm jvm(flags, {"3000"});
    ASSERT_TRUE(jvm.ready());
    scratch_dir dir;
    histogram jcmd = stable_dump(jvm, dir.file("heap.hprof"));
    ASSERT_FALSE(jcmd.empty());
    histogram mine = ours(analyze_json(dir.file("heap.hprof")));
    EXPECT_EQ(differences(jcmd, mine), "");
}

TEST(analyze_command, histogram_equals_jcmd_with_compressed_oops) {
    // CDS off: with CDS on, the archive's mirrors of classes not yet loaded sit in the heap and
    // are counted by the histogram, but the dumper writes no CLASS_DUMP for them (see the next test).
    expect_same_histogram({"-XX:+UseCompressedOops", "-Xshare:off"});
}

TEST(analyze_command, histogram_equals_jcmd_without_compressed_oops) {
    expect_same_histogram({"-XX:-UseCompressedOops"});
}

TEST(analyze_command, histogram_equals_jcmd_with_defaults_except_unlisted_mirrors) {
    demo_jvm jvm({}, {"3000"});
    ASSERT_TRUE(jvm.ready());
    scratch_dir dir;
    histogram jcmd = stable_dump(jvm, dir.file("heap.hprof"));
    nlohmann::json report = analyze_json(dir.file("heap.hprof"));
    histogram mine = ours(report);
    EXPECT_EQ(differences(jcmd, mine, {"java.lang.Class"}), "");
    // Every class the dump lists is counted, with its mirror's size; the archived mirrors of
    // classes never loaded are not in the dump at all, so jcmd counts more.
    auto cls = mine.at("java.lang.Class");
    EXPECT_GE(cls.first, report.at("summary").at("classes").get<std::uint64_t>());
    EXPECT_LE(cls.first, jcmd.at("java.lang.Class").first);
    EXPECT_EQ(report.at("summary").at("layout"), "64-bit, compressed oops");
}

TEST(analyze_command, gzip_dump_reads_like_the_plain_one) {
    demo_jvm jvm({"-Xshare:off"}, {"2000"});
    ASSERT_TRUE(jvm.ready());
    scratch_dir dir;
    histogram jcmd = stable_dump(jvm, dir.file("heap.hprof.gz"), {"-gz=1"});
    std::ifstream gz(dir.file("heap.hprof.gz"), std::ios::binary);
    ASSERT_EQ(gz.get(), 0x1f);  // really compressed
    auto r = run_command(
        {heapd_binary(), "analyze", "--json", "--top", "0", "--inflate-dir", dir.path(), dir.file("heap.hprof.gz")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(differences(jcmd, ours(nlohmann::json::parse(r.out))), "");
    // The inflated copy was an unlinked temporary: nothing but the analysis index is left beside the dump.
    std::set<std::string> left;
    for (const auto& e : std::filesystem::directory_iterator(dir.path())) left.insert(e.path().filename());
    EXPECT_EQ(left, (std::set<std::string>{"heap.hprof.gz", "heap.hprof.gz.heapd-index"}));
}

TEST(analyze_command, the_java_version_and_writer_are_those_of_the_jvm) {
    demo_jvm jvm({}, {"100"});
    ASSERT_TRUE(jvm.ready());
    scratch_dir dir;
    ASSERT_EQ(jvm.jcmd({"GC.heap_dump", dir.file("heap.hprof")}).exit_code, 0);
    // What the JVM itself says: "java.runtime.version=17.0.15+6-Debian-1deb12u1".
    const std::string props = jvm.jcmd({"VM.system_properties"}).out;
    auto property = [&](const std::string& key) {
        auto at = props.find("\n" + key + "=");
        if (at == std::string::npos) return std::string();
        at += key.size() + 2;
        return props.substr(at, props.find('\n', at) - at);
    };
    ASSERT_FALSE(property("java.runtime.version").empty()) << props;
    const nlohmann::json summary = analyze_json(dir.file("heap.hprof")).at("summary");
    EXPECT_EQ(summary.at("java_version"), property("java.runtime.version"));
    EXPECT_EQ(summary.at("java_runtime"), property("java.runtime.name"));
    EXPECT_EQ(summary.at("version_source"), "java.lang.VersionProps");
    EXPECT_EQ(summary.at("writer"), "HotSpot heap dumper");
}

TEST(analyze_command, threads_match_the_jvm) {
    demo_jvm jvm({}, {"100"});
    ASSERT_TRUE(jvm.ready());
    scratch_dir dir;
    ASSERT_EQ(jvm.jcmd({"GC.heap_dump", dir.file("heap.hprof")}).exit_code, 0);
    std::string stacks = jvm.jcmd({"Thread.print"}).out;
    nlohmann::json report = analyze_json(dir.file("heap.hprof"));
    std::map<std::string, nlohmann::json> by_name;
    for (const auto& t : report.at("threads")) by_name[t.at("name").get<std::string>()] = t;
    ASSERT_TRUE(by_name.count("main"));
    const std::string worker = "demo-worker-\u00e9\u4e2d";  // UTF-16 String contents, decoded
    ASSERT_TRUE(by_name.count(worker)) << report.at("threads").dump();
    EXPECT_EQ(by_name[worker].at("state"), "WAITING");
    EXPECT_EQ(by_name[worker].at("daemon"), true);
    EXPECT_EQ(by_name["main"].at("daemon"), false);
    bool idles = false;
    for (const auto& f : by_name["main"].at("frames"))
        idles = idles || f.get<std::string>().starts_with("Demo.idle(Demo.java:");
    EXPECT_TRUE(idles) << by_name["main"].dump();
    // Every thread we name is one jcmd Thread.print shows, in the same state.
    for (const auto& [name, t] : by_name) {
        std::string header = "\"" + name + "\"";
        auto at = stacks.find(header);
        ASSERT_NE(at, std::string::npos) << name;
        if (t.contains("state") && !t.at("frames").empty()) {
            auto state_at = stacks.find("java.lang.Thread.State: ", at);
            ASSERT_NE(state_at, std::string::npos);
            EXPECT_EQ(stacks.substr(state_at + 24, t.at("state").get<std::string>().size()), t.at("state")) << name;
        }
    }
}

TEST(analyze_command, truncated_dump_reports_what_was_read_and_where_it_stopped) {
    demo_jvm jvm({}, {"2000"});
    ASSERT_TRUE(jvm.ready());
    scratch_dir dir;
    ASSERT_EQ(jvm.jcmd({"GC.heap_dump", dir.file("heap.hprof")}).exit_code, 0);
    auto full = analyze_json(dir.file("heap.hprof"));
    auto size = std::filesystem::file_size(dir.file("heap.hprof"));
    std::filesystem::copy_file(dir.file("heap.hprof"), dir.file("cut.hprof"));
    std::filesystem::resize_file(dir.file("cut.hprof"), size * 2 / 3);
    auto r = run_command({heapd_binary(), "analyze", "--json", dir.file("cut.hprof")});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("cut short"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("at file offset"), std::string::npos) << r.err;
    auto cut = nlohmann::json::parse(r.out);
    auto objects = [](const nlohmann::json& j) { return j.at("summary").at("instances").get<std::uint64_t>(); };
    EXPECT_GT(objects(cut), 0u);
    EXPECT_LT(objects(cut), objects(full));
    ASSERT_FALSE(cut.at("problems").empty());
    EXPECT_TRUE(cut.at("problems")[0].at("truncation").get<bool>());
}

// An analysis allowed less memory than its object graph and dominator tree need keeps those big
// arrays in a nameless file instead (beside the dump, or in --spill-dir) and reports the same,
// figure for figure; the file is gone when it ends.
TEST(analyze_command, with_less_memory_than_its_graph_needs_it_spills_and_reports_the_same) {
    scratch_dir dir, spill;
    const std::string file = dir.file("big.hprof");
    ASSERT_TRUE(write_big_dump(file, 1'000'000));  // about 2 million objects and 4 million references
    auto plain = run_command({heapd_binary(), "analyze", "--json", "--no-index", file});
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    EXPECT_EQ(plain.err.find("kept in a file"), std::string::npos) << plain.err;
    auto spilled = run_command(
        {heapd_binary(), "analyze", "--json", "--no-index", "--memory", "64M", "--spill-dir", spill.path(), file});
    ASSERT_EQ(spilled.exit_code, 0) << spilled.err;
    EXPECT_NE(spilled.err.find("of big arrays were kept in a file in " + spill.path()), std::string::npos)
        << spilled.err;
    EXPECT_EQ(nlohmann::json::parse(spilled.out), nlohmann::json::parse(plain.out));
    EXPECT_TRUE(std::filesystem::is_empty(spill.path()));
    // Where the file has no room (a 1 MiB tmpfs, in a mount namespace of its own), a limit of half
    // that is too little: the spill is what makes the analysis fit. That is known once the objects
    // are counted (collecting them takes 16 bytes each at the least), and refused then, before the
    // object graph and the dominator tree are made.
    auto cramped = run_command({"unshare", "--mount", "--propagation", "private", "sh", "-c",
                                "mount -t tmpfs -o size=1m tmpfs \"$0\" && exec \"$@\"", spill.path(), heapd_binary(),
                                "analyze", "--no-index", "--memory", "32M", "--spill-dir", spill.path(), file});
    EXPECT_EQ(cramped.exit_code, 2) << cramped.out;
    // The disk is what is short, and the message says so with both figures.
    EXPECT_NE(cramped.err.find("more for its object graph and dominator tree, and only "), std::string::npos)
        << cramped.err;
    EXPECT_NE(cramped.err.find("were left of the 24.0 MiB of memory and the 0 B of disk its spill file may take in " +
                               spill.path()),
              std::string::npos)
        << cramped.err;
    EXPECT_NE(cramped.err.find("refused before they were made"), std::string::npos) << cramped.err;
    EXPECT_NE(cramped.err.find("less the reserve of 1.00 GiB"), std::string::npos) << cramped.err;
    // The same limit with nowhere to spill to is refused with the reason.
    auto nowhere = run_command(
        {heapd_binary(), "analyze", "--no-index", "--memory", "64M", "--spill-dir", dir.file("missing"), file});
    EXPECT_EQ(nowhere.exit_code, 2);
    EXPECT_NE(nowhere.err.find("--spill-dir"), std::string::npos) << nowhere.err;
}

// heapd analyze of a dump of 2 million objects with --memory 32M, spilling to a tmpfs of tmpfs_mib
// MiB of its own that keeps a reserve of 16 MiB: its error, and the least free space on that disk
// (sampled every 10 ms while heapd runs).
struct cramped_run {
    std::string err;
    std::uint64_t least_free = ~std::uint64_t{0};
    int samples = 0;
};
cramped_run analyze_on_a_small_disk(unsigned tmpfs_mib) {
    scratch_dir dir, spill;
    const std::string file = dir.file("big.hprof");
    cramped_run r;
    if (!write_big_dump(file, 1'000'000)) {
        ADD_FAILURE() << "cannot write " << file;
        return r;
    }
    const std::string samples = dir.file("free.txt");
    auto run = run_command({"unshare",
                            "--mount",
                            "--propagation",
                            "private",
                            "sh",
                            "-c",
                            "mount -t tmpfs -o size=" + std::to_string(tmpfs_mib) +
                                "m tmpfs \"$0\" || exit 99; "
                                // Sampled until heapd (this shell, once it execs) has exited: a zombie ends it too.
                                "(while grep -q '^State:[[:space:]]*[^Z]' /proc/$$/status 2>/dev/null; do "
                                "stat -f -c '%a %S' \"$0\" >> \"$1\"; sleep 0.01; done) >/dev/null 2>&1 & "
                                "shift; exec \"$@\"",
                            spill.path(),
                            samples,
                            heapd_binary(),
                            "analyze",
                            "--no-index",
                            "--memory",
                            "32M",
                            "--spill-dir",
                            spill.path(),
                            "--spill-reserve",
                            "16M",
                            "--spill-reserve-percent",
                            "10",
                            file});
    EXPECT_NE(run.exit_code, 99) << run.err;
    EXPECT_EQ(run.exit_code, 2) << run.out;
    EXPECT_NE(run.err.find("of disk its spill file may take in " + spill.path()), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("less the reserve of 16.0 MiB left to the host"), std::string::npos) << run.err;
    r.err = run.err;
    std::ifstream in(samples);
    std::uint64_t blocks = 0, block_size = 0;
    while (in >> blocks >> block_size) {
        r.least_free = std::min(r.least_free, blocks * block_size);
        ++r.samples;
    }
    std::printf("least free space on the spill's %u MiB disk: %.1f MiB in %d samples\n", tmpfs_mib,
                r.least_free / 1048576.0, r.samples);
    std::printf("heapd said: %s", run.err.c_str());
    return r;
}

// A spill that would not fit its disk stops short of the reserve it leaves (the larger of a share
// of the disk and a floor) and says so, naming the disk and both figures; the disk (an 80 MiB tmpfs
// of the test's own) is never below the reserve.
TEST(analyze_command, a_spill_never_takes_its_disks_reserve) {
    const cramped_run r = analyze_on_a_small_disk(80);
    EXPECT_NE(r.err.find("would have passed it"), std::string::npos) << r.err;
    ASSERT_GT(r.samples, 3);
    EXPECT_GE(r.least_free, 16u << 20);
}

// Where the references, once counted, show that the graph cannot fit what memory and the disk less
// its reserve leave (a 64 MiB tmpfs), the analysis is refused then, before the graph's arrays and
// the dominator tree are made, with what it needs and the room it had.
TEST(analyze_command, an_analysis_that_cannot_fit_is_refused_before_its_graph_is_made) {
    const cramped_run r = analyze_on_a_small_disk(64);
    EXPECT_NE(r.err.find("more for its object graph and dominator tree, and only "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(": refused before they were made"), std::string::npos) << r.err;
    ASSERT_GT(r.samples, 3);
    EXPECT_GE(r.least_free, 16u << 20);
}

TEST(analyze_command, a_second_analysis_reads_the_index_until_the_dump_changes) {
    demo_jvm jvm({}, {"500"});
    ASSERT_TRUE(jvm.ready());
    scratch_dir dir;
    const std::string dump = dir.file("heap.hprof"), index = dump + ".heapd-index";
    ASSERT_EQ(jvm.jcmd({"GC.heap_dump", dump}).exit_code, 0);
    auto fresh = run_command({heapd_binary(), "analyze", "--json", "--no-index", dump});
    ASSERT_EQ(fresh.exit_code, 0) << fresh.err;
    EXPECT_FALSE(std::filesystem::exists(index));
    auto first = run_command({heapd_binary(), "analyze", "--json", dump});
    ASSERT_TRUE(std::filesystem::exists(index));
    EXPECT_EQ((std::filesystem::status(index).permissions() & std::filesystem::perms::all),
              std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    auto second = run_command({heapd_binary(), "analyze", "--json", dump});
    EXPECT_EQ(first.out, fresh.out);
    EXPECT_EQ(second.out, fresh.out);
    // Other --top values are cut from the same index.
    auto top3 = nlohmann::json::parse(run_command({heapd_binary(), "analyze", "--json", "--top", "3", dump}).out);
    EXPECT_EQ(top3.at("histogram").size(), 3u);
    EXPECT_EQ(top3.at("dominators").size(), 3u);

    // Proof that the index is read: a marker put into it shows in the next report.
    auto doctored = nlohmann::ordered_json::parse(std::ifstream(index));
    doctored["report"]["summary"]["format"] = "FROM THE INDEX";
    std::ofstream(index) << doctored.dump();
    auto marked = nlohmann::json::parse(run_command({heapd_binary(), "analyze", "--json", dump}).out);
    EXPECT_EQ(marked.at("summary").at("format"), "FROM THE INDEX");
    // Touching the dump (a new mtime) makes the index stale: analyzed afresh and rewritten.
    std::filesystem::last_write_time(dump, std::filesystem::last_write_time(dump) + std::chrono::seconds(5));
    auto after_touch = nlohmann::json::parse(run_command({heapd_binary(), "analyze", "--json", dump}).out);
    EXPECT_EQ(after_touch.at("summary").at("format"), "JAVA PROFILE 1.0.2");
    // A damaged index is ignored and replaced.
    std::ofstream(index) << "{ not json";
    auto after_damage = run_command({heapd_binary(), "analyze", "--json", dump});
    EXPECT_EQ(after_damage.exit_code, 0) << after_damage.err;
    EXPECT_EQ(after_damage.out, fresh.out);
    // No temporary files are left behind.
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 2);
}

}  // namespace
}  // namespace heapd::test
