// heapctl against the real daemon with a real JVM's dump: the report for people and for scripts,
// the listings, removal, and the progress bar on a terminal only.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "formats/wire/protocol.h"
#include "support/hprof_builder.h"
#include "support/jvm_process.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

using wire::json;

command_result heapctl(const serve_process& d, std::vector<std::string> args) {
    args.insert(args.begin(), {heapctl_binary(), "--socket", d.socket()});
    return run_command(args);
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

// The dump id in "Kept as dump ID (...)".
std::string kept_id(const std::string& out) {
    auto at = out.find("Kept as dump ");
    if (at == std::string::npos) return "";
    at += 13;
    return out.substr(at, out.find(' ', at) - at);
}

// A JVM leaking 20,000 sessions into a static list, dumped with jcmd into the daemon's directory.
std::string sessions_dump(const serve_process& d) {
    demo_jvm jvm(java_main{"Sessions"}, {"-Xmx256m"}, {"20000"});
    EXPECT_TRUE(jvm.ready());
    const std::string file = d.dir() + "/sessions.hprof";
    auto r = jvm.jcmd({"GC.heap_dump", file});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return file;
}

TEST(heapctl, reports_a_real_dump_with_the_leak_and_its_path_first) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    const std::string file = sessions_dump(d);
    auto r = heapctl(d, {"report", file});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string& out = r.out;
    // Summary, then the suspects with their paths, then dominators, histogram, waste, threads.
    std::vector<std::size_t> at;
    for (const char* section :
         {"heapd analyze: ", "\nLeak suspects", "\nBiggest retainers", "\nClass histogram", "\nWaste", "\nThreads"}) {
        at.push_back(out.find(section));
        ASSERT_NE(at.back(), std::string::npos) << section << "\n" << out;
    }
    EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << out;
    const std::string suspects = out.substr(at[1], at[2] - at[1]);
    EXPECT_NE(suspects.find("  1. "), std::string::npos) << suspects;
    EXPECT_NE(suspects.find("Sessions (static LEAK)"), std::string::npos) << suspects;
    EXPECT_NE(suspects.find("java.util.ArrayList.elementData"), std::string::npos) << suspects;
    EXPECT_NE(suspects.find("20,000 Sessions$Session"), std::string::npos) << suspects;
    // Within 100 columns, but for table rows whose last column, a class name, is long by itself.
    for (const std::string& line : lines_of(out)) {
        if (line.size() <= 100) continue;
        const std::string last = line.substr(line.rfind(' ') + 1);
        EXPECT_GT(last.size(), 40u) << line;
        EXPECT_LE(line.size() - last.size(), 60u) << line;
    }
    EXPECT_EQ(r.err.find('\r'), std::string::npos);  // piped: no progress bar
    EXPECT_TRUE(r.err.empty()) << r.err;

    // Kept: shown again by id, listed, and the same report for scripts.
    const std::string id = kept_id(out);
    ASSERT_FALSE(id.empty()) << out;
    auto again = heapctl(d, {"report", id});
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(again.out, out);
    auto json_report = heapctl(d, {"report", id, "--json"});
    ASSERT_EQ(json_report.exit_code, 0) << json_report.err;
    json j = json::parse(json_report.out);
    EXPECT_EQ(j["summary"]["file"], file);
    const json& top = j["leak_suspects"]["suspects"].at(0);
    EXPECT_NE(top["path"]["text"].get<std::string>().find("Sessions (static LEAK)"), std::string::npos);
    EXPECT_GT(j["histogram"].size(), 20u);  // JSON without --top: the whole histogram
    auto topped = json::parse(heapctl(d, {"report", id, "--json", "--top", "3"}).out);
    EXPECT_EQ(topped["histogram"].size(), 3u);

    // histo and threads: one part of the same report.
    auto histo = heapctl(d, {"histo", id, "--top", "5"});
    ASSERT_EQ(histo.exit_code, 0) << histo.err;
    EXPECT_NE(histo.out.find("\nClass histogram (top 5"), std::string::npos) << histo.out;
    EXPECT_EQ(histo.out.find("\nLeak suspects"), std::string::npos) << histo.out;
    EXPECT_EQ(histo.out.find("\nThreads"), std::string::npos) << histo.out;
    EXPECT_EQ(json::parse(heapctl(d, {"histo", id, "--json"}).out), j["histogram"]);
    auto threads = heapctl(d, {"threads", id});
    ASSERT_EQ(threads.exit_code, 0) << threads.err;
    EXPECT_NE(threads.out.find("\nThreads ("), std::string::npos) << threads.out;
    EXPECT_NE(threads.out.find("\"main\""), std::string::npos) << threads.out;
    EXPECT_EQ(threads.out.find("\nClass histogram"), std::string::npos) << threads.out;
    EXPECT_EQ(json::parse(heapctl(d, {"threads", id, "--json"}).out), j["threads"]);

    auto dumps = heapctl(d, {"dumps"});
    ASSERT_EQ(dumps.exit_code, 0);
    EXPECT_NE(dumps.out.find(id), std::string::npos) << dumps.out;
    EXPECT_NE(dumps.out.find("leak suspect: "), std::string::npos) << dumps.out;
    EXPECT_NE(dumps.out.find(file), std::string::npos) << dumps.out;
    json listed = json::parse(heapctl(d, {"dumps", "--json"}).out);
    ASSERT_EQ(listed.size(), 1u);
    EXPECT_EQ(listed[0]["owner_uid"], 0);
    EXPECT_EQ(listed[0]["has_dump"], false);
    auto jobs = heapctl(d, {"jobs"});
    EXPECT_NE(jobs.out.find("done"), std::string::npos) << jobs.out;
    EXPECT_NE(jobs.out.find("report kept as dump " + id), std::string::npos) << jobs.out;
    json jobs_json = json::parse(heapctl(d, {"jobs", "--json"}).out);
    ASSERT_EQ(jobs_json.size(), 1u);
    EXPECT_EQ(jobs_json[0]["state"], "done");
    EXPECT_EQ(jobs_json[0]["entry"], id);

    // The report on disk: never world-readable.
    struct stat st {};
    ASSERT_EQ(::stat((d.store() + "/entries/" + id + "/report.json").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0640u);
    EXPECT_EQ(st.st_uid, 0u);
    // The log has one line per job start and finish, with pid, trigger and size.
    const std::string log = d.log();
    EXPECT_NE(log.find("job 1 analyze started: pid "), std::string::npos) << log;
    EXPECT_NE(log.find("trigger \"heapctl report\", " + file), std::string::npos) << log;
    EXPECT_NE(log.find("job 1 analyze done after "), std::string::npos) << log;

    ASSERT_EQ(heapctl(d, {"rm", id}).exit_code, 0);
    EXPECT_EQ(heapctl(d, {"rm", id}).exit_code, 5);
    auto gone = heapctl(d, {"report", id});
    EXPECT_EQ(gone.exit_code, 5);
    EXPECT_NE(gone.err.find("no file or dump named " + id), std::string::npos) << gone.err;
    EXPECT_FALSE(std::filesystem::exists(d.store() + "/entries/" + id));
}

TEST(heapctl, names_in_a_crafted_dump_cannot_drive_the_terminal) {
    // A class named with a window title, a screen clear and an 8-bit CSI, one instance of it held by a
    // global root: its name is in the suspects, the retainers and the histogram.
    const std::string evil =
        "Evil\x1b]0;root shell\x07\x1b[2J\xC2\x9B"
        "31m";
    hprof_builder b(8);
    b.utf8(1, "java/lang/Object").utf8(2, evil).utf8(3, "data");
    b.load_class(1, 0x100, 0, 1).load_class(2, 0x200, 0, 2);
    b.begin_segment();
    b.class_dump(0x100, 0, {});
    b.class_dump(0x200, 0x100, {{3, 11}});
    b.root_jni_global(0x1000, 0x9000);
    b.instance(0x1000, 0x200, values(8).u8(42).bytes());
    b.end_segment();
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    const std::string file = d.dir() + "/evil.hprof";
    ASSERT_TRUE(b.write_to(file));
    for (const command_result& r : {heapctl(d, {"report", file}), run_command({heapd_binary(), "analyze", file})}) {
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_NE(r.out.find("Evil\\x1b]0;root shell\\x07\\x1b[2J\\u009b31m"), std::string::npos) << r.out;
        EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
        EXPECT_EQ(r.out.find('\x07'), std::string::npos);
        EXPECT_EQ(r.out.find("\xC2\x9B"), std::string::npos);
    }
}

TEST(heapctl, a_file_that_is_no_dump_is_bad_input) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    const std::string file = d.dir() + "/notes.txt";
    { std::ofstream(file) << "not a heap dump\n"; }
    auto r = heapctl(d, {"report", file});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("not an HPROF file"), std::string::npos) << r.err;
    auto dir = heapctl(d, {"report", d.dir()});
    EXPECT_EQ(dir.exit_code, 2);
    EXPECT_NE(dir.err.find("is not a regular file"), std::string::npos) << dir.err;
}

TEST(heapctl, draws_a_progress_bar_on_a_terminal_and_none_when_piped) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    const std::string file = d.dir() + "/big.hprof";
    ASSERT_TRUE(write_big_dump(file, 3'000'000));
    // script(1) gives heapctl a terminal; its output is what the terminal showed.
    const std::string command = heapctl_binary() + " --socket " + d.socket() + " report --top 1 " + file;
    auto tty = run_command({"script", "-qec", command, "/dev/null"});
    ASSERT_EQ(tty.exit_code, 0) << tty.out << tty.err;
    EXPECT_NE(tty.out.find("\rbig.hprof ["), std::string::npos) << tty.out.substr(0, 2000);
    EXPECT_NE(tty.out.find("%  "), std::string::npos);
    EXPECT_NE(tty.out.find("\r\x1b[K"), std::string::npos);  // erased before the report
    EXPECT_NE(tty.out.find("Leak suspects"), std::string::npos);
    auto piped = heapctl(d, {"report", "--top", "1", file});
    ASSERT_EQ(piped.exit_code, 0) << piped.err;
    EXPECT_EQ(piped.err.find('\r'), std::string::npos);
    EXPECT_EQ(piped.err.find("ETA"), std::string::npos);
    EXPECT_TRUE(piped.err.empty()) << piped.err;
}

}  // namespace
}  // namespace heapd::test
