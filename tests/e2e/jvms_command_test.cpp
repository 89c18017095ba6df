// `heapd jvms` against real JVMs: the caller's, another user's and a container's are listed with
// what their counters say, a stale file is not, main classes agree with jps -l, heap and GC with
// jstat -gc (within what changes between two reads).
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/isolated_jvm.h"
#include "support/jvm_process.h"

namespace heapd::test {
namespace {

namespace fs = std::filesystem;

nlohmann::json jvms_json() {
    auto r = run_command({heapd_binary(), "jvms", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
}

const nlohmann::json* row_of(const nlohmann::json& doc, pid_t pid) {
    for (const auto& row : doc.at("jvms"))
        if (row.at("pid").get<pid_t>() == pid) return &row;
    return nullptr;
}

std::map<pid_t, std::string> jps() {
    auto r = run_command({"jps", "-l"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::map<pid_t, std::string> out;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
        std::istringstream f(line);
        pid_t pid = 0;
        std::string main;
        if (f >> pid) {
            std::getline(f >> std::ws, main);
            out[pid] = main;
        }
    }
    return out;
}

TEST(jvms_command, lists_jvms_of_users_and_containers_as_jps_does) {
    demo_jvm mine({"-XX:+HeapDumpOnOutOfMemoryError", "-XX:HeapDumpPath=/var/tmp/heapd-test-dumps",
                   "-XX:+ExitOnOutOfMemoryError"},
                  {"10"});
    temp_user user;
    ASSERT_TRUE(user.ok());
    isolated_jvm theirs(java_main{"Demo"}, {}, {"10"}, {&user, false});
    isolated_jvm boxed(java_main{"Demo"}, {}, {"10"}, {nullptr, true});
    ASSERT_TRUE(mine.ready() && theirs.ready() && boxed.ready());

    auto before = jvms_json();
    auto listed = jps();
    auto after = jvms_json();

    const nlohmann::json* m = row_of(after, mine.pid());
    ASSERT_NE(m, nullptr) << after.dump(2);
    EXPECT_EQ(m->at("ns_pid"), mine.pid());
    EXPECT_EQ(m->at("in_container"), false);
    EXPECT_EQ(m->at("main_class"), "Demo");
    EXPECT_EQ(m->at("command"), "Demo 10");
    EXPECT_EQ(m->at("oom").at("heap_dump_on_oom"), true);
    EXPECT_EQ(m->at("oom").at("heap_dump_path"), "/var/tmp/heapd-test-dumps");
    EXPECT_EQ(m->at("oom").at("exit_on_oom"), true);
    // Its resident memory against the limit that holds it (a cgroup's, else the host's memory).
    ASSERT_TRUE(m->contains("memory")) << m->dump(2);
    EXPECT_GT(m->at("memory").at("resident").get<long long>(), 10ll << 20);
    EXPECT_GT(m->at("memory").at("limit").get<long long>(), m->at("memory").at("resident").get<long long>());
    EXPECT_EQ(m->at("oom").at("on_out_of_memory_error"), "");
    EXPECT_GT(m->at("heap").at("max").get<std::int64_t>(), 0);
    EXPECT_FALSE(m->at("vm_version").get<std::string>().empty());

    const nlohmann::json* t = row_of(after, theirs.pid());
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->at("user"), user.name());
    EXPECT_EQ(t->at("uid"), user.uid());
    EXPECT_EQ(t->at("in_container"), false);
    EXPECT_EQ(t->at("oom").at("heap_dump_on_oom"), false);

    const nlohmann::json* b = row_of(after, boxed.pid());
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->at("ns_pid"), 1);
    EXPECT_EQ(b->at("in_container"), true);
    EXPECT_EQ(b->at("main_class"), "Demo");
    EXPECT_EQ(b->at("perfdata"), "/proc/" + std::to_string(boxed.pid()) + "/root/tmp/hsperfdata_root/1");

    // Every JVM present throughout agrees with jps -l on its main class.
    std::size_t compared = 0;
    for (const auto& row : after.at("jvms")) {
        pid_t pid = row.at("pid").get<pid_t>();
        if (!row_of(before, pid) || !listed.contains(pid) || !row.contains("main_class")) continue;
        EXPECT_EQ(row.at("main_class"), listed.at(pid)) << pid;
        ++compared;
    }
    EXPECT_GE(compared, 3u);
    // A JVM of a test running beside this one may be starting while jps reads (its file made, not yet
    // mapped): one more listing, taken after jps, must show every JVM jps saw that is still alive.
    auto later = jvms_json();
    for (const auto& [pid, main] : listed) {
        if (main == "jdk.jcmd/sun.tools.jps.Jps" || row_of(before, pid) || row_of(after, pid) || row_of(later, pid))
            continue;
        // A zombie or exiting JVM has no memory left to map its file: it is rightly not listed.
        std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
        std::string first_line;
        bool has_memory = maps && std::getline(maps, first_line) && !first_line.empty();
        EXPECT_FALSE(has_memory) << "jps lists " << pid << " " << main;
    }

    // Run by the other user: its own JVM, and a count of the files it may not inspect.
    auto as_user =
        run_command({"setpriv", "--reuid=" + std::to_string(user.uid()), "--regid=" + std::to_string(user.gid()),
                     "--clear-groups", heapd_binary(), "jvms", "--json"});
    ASSERT_EQ(as_user.exit_code, 0) << as_user.err;
    auto limited = nlohmann::json::parse(as_user.out);
    EXPECT_NE(row_of(limited, theirs.pid()), nullptr) << as_user.out;
    EXPECT_EQ(row_of(limited, mine.pid()), nullptr);
    EXPECT_GE(limited.at("unreadable").get<std::size_t>(), 1u);

    auto text = run_command({heapd_binary(), "jvms"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("MAIN CLASS"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("RSS/LIMIT"), std::string::npos) << text.out;
    std::istringstream lines(text.out);
    std::map<pid_t, std::string> line_of;
    for (std::string line; std::getline(lines, line);) {
        std::istringstream f(line);
        pid_t pid = 0;
        if (f >> pid) line_of[pid] = line;
    }
    ASSERT_TRUE(line_of.contains(mine.pid())) << text.out;
    EXPECT_NE(line_of[mine.pid()].find(" dump,exit "), std::string::npos) << line_of[mine.pid()];
    EXPECT_NE(line_of[mine.pid()].find(" host "), std::string::npos);
    ASSERT_TRUE(line_of.contains(boxed.pid())) << text.out;
    EXPECT_NE(line_of[boxed.pid()].find(" container "), std::string::npos) << line_of[boxed.pid()];
    ASSERT_TRUE(line_of.contains(theirs.pid())) << text.out;
    EXPECT_NE(line_of[theirs.pid()].find(" " + user.name() + " "), std::string::npos);
}

TEST(jvms_command, leaves_out_a_stale_file) {
    demo_jvm jvm({}, {"10"});
    ASSERT_TRUE(jvm.ready());
    const std::string real = "/tmp/hsperfdata_root/" + std::to_string(jvm.pid());
    ASSERT_TRUE(fs::exists(real));
    // A pid no process has: a child that exited.
    pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    ::waitpid(child, nullptr, 0);
    const std::string stale = "/tmp/hsperfdata_root/" + std::to_string(child);
    // Removes the stale copy whatever happens.
    struct remove_file {
        std::string path;
        ~remove_file() {
            std::error_code ec;
            fs::remove(path, ec);
        }
    } guard{stale};
    ASSERT_TRUE(fs::copy_file(real, stale));
    auto doc = jvms_json();
    EXPECT_NE(row_of(doc, jvm.pid()), nullptr);
    EXPECT_EQ(row_of(doc, child), nullptr);
    for (const auto& row : doc.at("jvms")) EXPECT_NE(row.at("perfdata"), stale);
}

TEST(jvms_command, agrees_with_jstat) {
    demo_jvm jvm({"-Xmx128m", "-XX:+UseParallelGC"}, {"3000"});
    ASSERT_TRUE(jvm.ready());
    ASSERT_EQ(jvm.jcmd({"GC.run"}).exit_code, 0);
    auto before = jvms_json();
    auto js = jstat_gc(jvm.pid());
    auto after = jvms_json();
    const nlohmann::json* a = row_of(before, jvm.pid());
    const nlohmann::json* b = row_of(after, jvm.pid());
    ASSERT_TRUE(a && b);
    auto within = [](double v, double x, double y, double slack) {
        return v >= std::min(x, y) - slack && v <= std::max(x, y) + slack;
    };
    auto kb = [](const nlohmann::json& v) { return v.get<double>() / 1024.0; };
    const double used = js.at("S0U") + js.at("S1U") + js.at("EU") + js.at("OU");
    EXPECT_TRUE(within(used, kb(a->at("heap").at("used")), kb(b->at("heap").at("used")), 0.2))
        << used << " KB by jstat, " << a->at("heap") << " .. " << b->at("heap");
    EXPECT_TRUE(within(js.at("OU"), kb(a->at("old_gen").at("used")), kb(b->at("old_gen").at("used")), 0.06));
    EXPECT_TRUE(within(js.at("OC"), kb(a->at("old_gen").at("capacity")), kb(b->at("old_gen").at("capacity")), 0.06));
    EXPECT_TRUE(within(js.at("GCT"), a->at("gc").at("time_seconds").get<double>(),
                       b->at("gc").at("time_seconds").get<double>(), 0.0011));
    EXPECT_GE(js.at("FGC"), 1);
    EXPECT_TRUE(within(js.at("FGC"), a->at("gc").at("collectors").at(1).at("invocations").get<double>(),
                       b->at("gc").at("collectors").at(1).at("invocations").get<double>(), 0));
    EXPECT_EQ(b->at("heap").at("max"), 128 << 20);  // Parallel: the generations add up to -Xmx
    const double share = b->at("gc").at("time_share").get<double>();
    EXPECT_GT(share, 0);
    EXPECT_LT(share, 1);
    EXPECT_EQ(b->at("gc").at("last_cause"), "Diagnostic Command");
}

}  // namespace
}  // namespace heapd::test
