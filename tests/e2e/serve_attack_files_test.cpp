// The daemon attacked through the files it touches, by a local user who owns one JVM and nothing
// else (a user made for the test): they serve their JVM's attach socket themselves and swap the
// staged dump's name for a link to a file only root may read; a link is planted in the store; they
// claim another user's JVM for a file of their own (adopt); the daemon is killed while its attach
// helper waits on them, or together with it while a JVM stages a dump. Nothing outside the store
// may change, no report of someone else's file may be made, a restart must not be refused, and
// nothing may be left in a JVM's /tmp.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "formats/wire/protocol.h"
#include "support/hostile_user.h"
#include "support/isolated_jvm.h"
#include "support/jvm_process.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

namespace fs = std::filesystem;
using wire::json;
using wire::reply_kind;

struct file_state {
    mode_t mode = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    off_t size = 0;
    bool operator==(const file_state&) const = default;
};

file_state state_of(const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return {};
    return {st.st_mode, st.st_uid, st.st_gid, st.st_size};
}

// Every path under root that is a symbolic link.
std::vector<std::string> links_under(const std::string& root) {
    std::vector<std::string> found;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root, ec); it != fs::recursive_directory_iterator();
         it.increment(ec))
        if (it->is_symlink(ec)) found.push_back(it->path());
    return found;
}

TEST(serve_attack, a_jvm_owner_swapping_the_staged_dump_for_a_link_reaches_nothing_outside_the_store) {
    temp_user attacker;
    ASSERT_TRUE(attacker.ok());
    // The file the link names: a heap dump only root may read.
    shared_dir secrets;
    const std::string secret = secrets.file("root-only.hprof");
    fs::copy_file(peer_dump, secret);
    ASSERT_EQ(::chmod(secret.c_str(), 0600), 0);
    const file_state before = state_of(secret);
    // The attacker's own JVM, as a JVM of another user is dumped: staged in its /tmp, then taken out.
    hostile_jvm target(attacker, hostile_act::swap_with_link, secret);
    ASSERT_TRUE(target.ok());
    const isolated_jvm& jvm = target.jvm;
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();

    // The race is the attacker's to win once in many tries; each try is a whole dump request.
    for (int attempt = 0; attempt < 20; ++attempt) {
        auto r = run_heapctl(d, {"dump", std::to_string(jvm.pid()), "--wait", "--json"}, &attacker);
        EXPECT_NE(r.exit_code, 0) << "attempt " << attempt << ": a dump was made of what the attacker served\n"
                                  << r.out;
        ASSERT_EQ(state_of(secret), before) << "attempt " << attempt << " changed the root-only file\n"
                                            << r.out << r.err << d.log();
        EXPECT_EQ(r.out.find("java.lang."), std::string::npos) << "attempt " << attempt << " reported the file:\n"
                                                               << r.out;
    }
    EXPECT_EQ(json::parse(run_heapctl(d, {"dumps", "--json"}).out).size(), 0u);
    EXPECT_EQ(links_under(d.store()), std::vector<std::string>{});
    // Each try ends refused: the link not followed, the file refused, or the attacker's own bytes
    // analyzed (with the attacker's rights) and found not to be a heap dump.
    for (const json& job : json::parse(run_heapctl(d, {"jobs", "--json"}).out)) {
        const std::string error = job.value("error", "");
        EXPECT_TRUE(error.find("Too many levels of symbolic links") != std::string::npos ||
                    error.find("not taken") != std::string::npos ||
                    error.find("not an HPROF file") != std::string::npos)
            << error;
    }
}

TEST(serve_attack, a_store_entry_holding_a_link_is_removed_at_start_and_the_link_never_followed) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    auto r = run_heapctl(d, {"report", "--top", "1", peer_dump});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto dumps = json::parse(run_heapctl(d, {"dumps", "--json"}).out);
    ASSERT_EQ(dumps.size(), 1u);
    const std::string entry = d.store() + "/entries/" + dumps[0]["id"].get<std::string>();
    ASSERT_EQ(d.stop(), 0);

    shared_dir secrets;
    const std::string secret = secrets.file("root-only");
    { std::ofstream(secret) << "secret\n"; }
    ASSERT_EQ(::chmod(secret.c_str(), 0600), 0);
    const file_state before = state_of(secret);
    ASSERT_EQ(::symlink(secret.c_str(), (entry + "/notes.txt").c_str()), 0);

    ASSERT_TRUE(d.start()) << d.log();
    EXPECT_EQ(state_of(secret), before);  // neither chmodded nor chowned through the link
    EXPECT_FALSE(fs::exists(fs::symlink_status(entry)));
    EXPECT_NE(d.log().find("notes.txt is not a regular file"), std::string::npos) << d.log();
    EXPECT_EQ(json::parse(run_heapctl(d, {"dumps", "--json"}).out).size(), 0u);
}

TEST(serve_attack, adopting_a_file_as_another_users_jvm_is_refused_whatever_start_time_is_claimed) {
    temp_user attacker, victim;
    ASSERT_TRUE(attacker.ok() && victim.ok());
    isolated_jvm jvm = attach_target_of(victim);
    ASSERT_TRUE(jvm.ready());
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    shared_dir files;
    const std::string mine = files.file("attackers.hprof");
    fs::copy_file(peer_dump, mine);
    ASSERT_EQ(::chown(mine.c_str(), attacker.uid(), attacker.gid()), 0);

    for (std::uint64_t claimed : {std::uint64_t{0}, std::uint64_t{12345}}) {
        int fd = ::open(mine.c_str(), O_RDONLY | O_CLOEXEC);
        ASSERT_GE(fd, 0);
        auto r = request_as(attacker, d.socket(),
                            {1,
                             "dump",
                             {{"pid", jvm.pid()},
                              {"adopt", true},
                              {"wait", true},
                              {"trigger", "oom"},
                              {"start_time", claimed},
                              {"dump_path", "/tmp/java_pid1.hprof"}}},
                            fd);
        ::close(fd);
        ASSERT_TRUE(r.has_value()) << "start time " << claimed;
        EXPECT_EQ(r->kind, reply_kind::error) << "start time " << claimed << ": " << r->result.dump();
        EXPECT_EQ(r->error.kind, wire::error_kind::permission_denied) << r->error.message;
    }
    // Root asking for the victim's JVM's report finds nothing of the attacker's.
    EXPECT_EQ(json::parse(run_heapctl(d, {"dumps", "--json"}).out).size(), 0u);
    auto report = run_heapctl(d, {"report", std::to_string(jvm.pid())});
    EXPECT_NE(report.exit_code, 0) << report.out;
}

// The process's start time: field 22 of /proc/PID/stat (clock ticks since boot), 0 when it is gone.
std::uint64_t start_time_of(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')');
    if (close == std::string::npos) return 0;
    std::istringstream fields(stat.substr(close + 2));
    std::string field;
    for (int i = 3; i <= 22 && fields >> field; ++i)
        if (i == 22) return std::stoull(field);
    return 0;
}

// Once another user's JVM has exited, its pid and start time are no one's to claim: the attacker's
// file adopted "as" that JVM, with an OOM table planted for it at the names the agent used to use and
// at one it could use now, is kept as the attacker's own file. Root's report, diff and history of
// the pid show the victim's dump alone, and neither planted table is taken.
TEST(serve_attack, a_dump_adopted_as_another_users_exited_jvm_stays_the_adopters_own_file) {
    temp_user attacker, victim;
    ASSERT_TRUE(attacker.ok() && victim.ok());
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    auto jvm = std::make_unique<isolated_jvm>(java_main{"AttachTarget"}, std::vector<std::string>{"-Xmx64m"},
                                              std::vector<std::string>{}, isolation{&victim, false, {}});
    ASSERT_TRUE(jvm->ready());
    const pid_t pid = jvm->pid();
    const std::uint64_t start = start_time_of(pid);
    ASSERT_NE(start, 0u);
    auto dumped = run_heapctl(d, {"dump", std::to_string(pid), "--wait", "--top", "1"});
    ASSERT_EQ(dumped.exit_code, 0) << dumped.err << d.log();
    const json listed = json::parse(run_heapctl(d, {"dumps", "--json"}).out);
    ASSERT_EQ(listed.size(), 1u);
    const std::string victims = listed[0].at("id").get<std::string>();
    jvm.reset();  // the victim's JVM exits
    ASSERT_EQ(start_time_of(pid), 0u);

    // The attacker's tables, planted where the agent writes one at an OutOfMemoryError.
    const std::string prefix = "/tmp/heapd-agent-oom-" + std::to_string(pid) + "-" + std::to_string(start);
    const std::vector<std::string> planted = {prefix + ".json", prefix + "-0123456789abcdef.json"};
    for (const std::string& path : planted) {
        { std::ofstream(path) << R"({"protocol":1,"agent":"forged","command":"show","error":"","sampling":true})"; }
        ASSERT_EQ(::chown(path.c_str(), attacker.uid(), attacker.gid()), 0);
    }
    struct remove_planted {
        const std::vector<std::string>& paths;
        ~remove_planted() {
            for (const std::string& p : paths) ::unlink(p.c_str());
        }
    } guard{planted};
    shared_dir files;
    const std::string mine = files.file("attackers.hprof");
    fs::copy_file(peer_dump, mine);
    ASSERT_EQ(::chown(mine.c_str(), attacker.uid(), attacker.gid()), 0);
    int fd = ::open(mine.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    auto r = request_as(attacker, d.socket(),
                        {1,
                         "dump",
                         {{"pid", pid},
                          {"adopt", true},
                          {"wait", true},
                          {"trigger", "oom"},
                          {"start_time", start},
                          {"command", "VictimService --port 8080"},
                          {"dump_path", "/tmp/java_pid1.hprof"}}},
                        fd);
    ::close(fd);
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->kind, reply_kind::result) << r->error.message;  // kept, as the attacker's own
    const json kept = r->result.at("dump");
    EXPECT_EQ(kept.value("pid", -1), 0) << kept.dump();
    EXPECT_EQ(kept.value("claimed_pid", 0), pid) << kept.dump();
    EXPECT_EQ(kept.value("jvm_start_time", std::uint64_t{1}), 0u) << kept.dump();
    EXPECT_EQ(kept.value("command_line", "?"), "") << kept.dump();
    EXPECT_EQ(kept.value("owner_uid", 0u), attacker.uid()) << kept.dump();
    EXPECT_NE(kept.value("file", "").find("not verified"), std::string::npos) << kept.dump();
    for (const std::string& path : planted) EXPECT_TRUE(fs::exists(path)) << path << " was taken";

    // Root asking about the pid sees the victim's dump, and nothing to compare it with.
    raw_client root(d.socket());
    ASSERT_TRUE(root.send_request({2, "report", {{"pid", pid}, {"top", 1}, {"history", true}}}));
    auto report = root.read_reply();
    ASSERT_TRUE(report && report->kind == reply_kind::result) << (report ? report->error.message : "no reply");
    const json& got = report->result;
    EXPECT_EQ(got.at("dump").at("id").get<std::string>(), victims);
    EXPECT_EQ(got.value("history", json::array()).size(), 1u) << got.value("history", json::array()).dump();
    EXPECT_FALSE(got.contains("growth")) << got.at("growth").dump().substr(0, 300);
    auto diff = run_heapctl(d, {"diff", std::to_string(pid)});
    EXPECT_NE(diff.exit_code, 0) << diff.out;
    EXPECT_NE(diff.err.find("only one dump"), std::string::npos) << diff.err;
}

TEST(serve_attack, a_killed_daemon_restarts_at_once_while_its_attach_helper_still_waits_on_a_jvm) {
    temp_user owner;
    ASSERT_TRUE(owner.ok());
    hostile_jvm target(owner, hostile_act::stay_silent);
    ASSERT_TRUE(target.ok());
    const isolated_jvm& jvm = target.jvm;
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();

    raw_client c(d.socket());
    ASSERT_TRUE(c.send_request({1, "dump", {{"pid", jvm.pid()}, {"wait", true}}}));
    std::optional<wire::reply> r;
    while ((r = c.read_reply(std::chrono::seconds(30))) && r->kind == reply_kind::progress)
        if (r->progress.phase == "dump") break;
    ASSERT_TRUE(r && r->kind == reply_kind::progress) << "the dump did not start";
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the helper is connected and waiting
    EXPECT_EQ(d.stop(SIGKILL), 128 + SIGKILL);
    c.close();

    // The helper waits on (until its own limit); the store must not stay locked meanwhile.
    ASSERT_TRUE(d.start()) << d.log();
    EXPECT_EQ(d.log().find("another heapd is using the store"), std::string::npos) << d.log();
}

TEST(serve_attack, a_dump_staged_when_the_daemon_and_its_helper_were_killed_is_removed_at_start) {
    temp_user owner;
    ASSERT_TRUE(owner.ok());
    // About 300 MB of live objects: the JVM takes a while to write them.
    isolated_jvm jvm(java_main{"Sessions"}, {"-Xmx1g"}, {"300000"}, isolation{&owner, false, {}});
    ASSERT_TRUE(jvm.ready());
    // Whatever the outcome, nothing of this test stays in the JVM's /tmp (the host's).
    struct remove_staged {
        const isolated_jvm& jvm;
        ~remove_staged() {
            for (const std::string& p : staged_in(jvm.pid(), jvm.ns_pid())) ::unlink(p.c_str());
        }
    } guard{jvm};
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    raw_client c(d.socket());
    ASSERT_TRUE(c.send_request({1, "dump", {{"pid", jvm.pid()}, {"wait", true}}}));
    for (int i = 0; i < 6000 && staged_in(jvm.pid(), jvm.ns_pid()).empty(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_FALSE(staged_in(jvm.pid(), jvm.ns_pid()).empty()) << "the JVM did not start writing its dump";
    // As systemd stops a service: every process of it at once (here: the daemon and its children).
    // The daemon is frozen first, so that it cannot act on its helper's death before its own.
    const pid_t daemon = d.pid();
    ASSERT_EQ(::kill(daemon, SIGSTOP), 0);
    std::vector<pid_t> helpers;
    std::ifstream children("/proc/" + std::to_string(daemon) + "/task/" + std::to_string(daemon) + "/children");
    for (pid_t p; children >> p;) helpers.push_back(p);
    for (const std::string& task : [&] {
             std::vector<std::string> t;
             std::error_code ec;
             for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(daemon) + "/task", ec))
                 t.push_back(e.path().filename());
             return t;
         }()) {
        std::ifstream more("/proc/" + std::to_string(daemon) + "/task/" + task + "/children");
        for (pid_t p; more >> p;) helpers.push_back(p);
    }
    ASSERT_FALSE(helpers.empty());
    for (pid_t p : helpers) ::kill(p, SIGKILL);
    EXPECT_EQ(d.stop(SIGKILL), 128 + SIGKILL);
    c.close();
    // The JVM finishes its dump into the staged name; nobody is left to take it.
    bool answers = false;
    for (int i = 0; i < 120 && !answers; ++i) {
        auto jcmd =
            run_command({"setpriv", "--reuid=" + std::to_string(owner.uid()), "--regid=" + std::to_string(owner.gid()),
                         "--clear-groups", "jcmd", std::to_string(jvm.pid()), "VM.version"});
        answers = jcmd.exit_code == 0;
        if (!answers) std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    ASSERT_TRUE(answers);
    ASSERT_FALSE(staged_in(jvm.pid(), jvm.ns_pid()).empty()) << "no orphan to clean up";
    ASSERT_TRUE(d.start()) << d.log();
    EXPECT_EQ(staged_in(jvm.pid(), jvm.ns_pid()), std::vector<std::string>{});
    EXPECT_NE(d.log().find("staged by the last run"), std::string::npos) << d.log();
}

// A socket the attacker bound at another user's JVM's attach name (/tmp/.java_pid<pid>) and left
// with nothing listening: in the sticky /tmp the JVM may neither remove nor replace it, so its
// listener could never start, its owner's jcmd failed, and root's dump waited out attach and fell
// back to a snapshot (the JVM stopped for minutes). The root daemon removes a name there that is not
// the JVM's own user's and attaches as usual; the owner's jcmd works again.
TEST(serve_attack, a_squatter_at_a_jvms_attach_name_is_cleared_by_roots_dump) {
    temp_user victim, attacker;
    ASSERT_TRUE(victim.ok() && attacker.ok());
    isolated_jvm jvm = attach_target_of(victim);
    ASSERT_TRUE(jvm.ready());
    const std::string name = "/tmp/.java_pid" + std::to_string(jvm.pid());
    struct remove_squatter {
        std::string path;
        uid_t uid;
        ~remove_squatter() {
            if (state_of(path).uid == uid) ::unlink(path.c_str());
        }
    } guard{name, attacker.uid()};
    const pid_t child = ::fork();
    if (child == 0) {
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", name.c_str());
        const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        ::_exit(become(attacker) && ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 ? 0 : 1);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "could not bind " << name;
    ASSERT_EQ(state_of(name).uid, attacker.uid());
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    const auto start = std::chrono::steady_clock::now();
    auto dumped = run_heapctl(d, {"dump", std::to_string(jvm.pid()), "--wait", "--top", "1"});
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(dumped.exit_code, 0) << dumped.err << d.log();
    EXPECT_LT(took, 30) << d.log();
    EXPECT_EQ(d.log().find("snapshot"), std::string::npos) << d.log();
    EXPECT_NE(state_of(name).uid, attacker.uid());
    auto jcmd =
        run_command({"setpriv", "--reuid", std::to_string(victim.uid()), "--regid", std::to_string(victim.gid()),
                     "--clear-groups", "jcmd", std::to_string(jvm.pid()), "VM.version"});
    EXPECT_EQ(jcmd.exit_code, 0) << jcmd.out << jcmd.err;
    std::cout << "root's dump past the squatter: " << took << " s\n";
}

}  // namespace
}  // namespace heapd::test
