// The daemon attacked through its spool (mode 1733: anyone may drop a request there) by a local
// user with no JVM at all (a user made for the test). The daemon runs as systemd runs it: the leader
// of a session without a terminal, where the first terminal it opened without O_NOCTTY would become
// its own. A spooled request's dump path is the writer's to name: it must be opened with the
// writer's rights, never with heapd's.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>

#include "support/hostile_user.h"
#include "support/isolated_jvm.h"
#include "support/jvm_process.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

using namespace std::chrono_literals;

// Field 7 of /proc/PID/stat: the controlling terminal's device number, 0 for none.
long tty_of(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')');
    if (close == std::string::npos) return -1;
    long state_and_more[5] = {};
    char state = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %ld %ld %ld %ld", &state, &state_and_more[0], &state_and_more[1],
                    &state_and_more[2], &state_and_more[3]) != 5)
        return -1;
    return state_and_more[3];
}

// A process of the attacker's holding a pseudo-terminal's master, whose slave it named in a request
// dropped into the spool; told by the test to type ^C and ^Z into the terminal, then to hang it up.
class terminal_holder {
public:
    terminal_holder(const temp_user& user, const std::string& spool, const std::string& extra_path) {
        int up[2], down[2];
        if (::pipe(up) != 0 || ::pipe(down) != 0) return;
        pid_ = ::fork();
        if (pid_ == 0) {
            ::close(up[0]);
            ::close(down[1]);
            if (!become(user)) ::_exit(1);
            const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
            if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) ::_exit(2);
            const std::string slave = ::ptsname(master);
            // Two requests: the terminal, and a path the attacker may not open (what root could).
            int n = 0;
            for (const std::string& path : {slave, extra_path}) {
                if (path.empty()) continue;
                const std::string name = spool + "/.tmp-attack-" + std::to_string(n);
                {
                    std::ofstream out(name);
                    out << "{\"pid\":1,\"trigger\":\"oom\",\"dump_path\":\"" << path << "\"}\n";
                }
                if (::rename(name.c_str(), (spool + "/attack-" + std::to_string(n++) + ".json").c_str()) != 0)
                    ::_exit(3);
            }
            write_text(up[1], slave + "\n");
            char what = 0;
            while (::read(down[0], &what, 1) == 1) {
                if (what == 't') write_text(master, "\x03\x1a\x1c");  // ^C, ^Z, ^\ under the default termios
                if (what == 'q') break;
            }
            ::close(master);  // a hang-up for the terminal's session, if it has one
            ::_exit(0);
        }
        ::close(up[1]);
        ::close(down[0]);
        to_ = down[1];
        char buffer[128] = {};
        const ssize_t got = ::read(up[0], buffer, sizeof buffer - 1);
        ::close(up[0]);
        if (got > 0) slave_ = std::string(buffer, static_cast<std::size_t>(got) - 1);
    }
    ~terminal_holder() {
        if (to_ >= 0) ::close(to_);
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
    }
    bool ok() const { return !slave_.empty(); }
    const std::string& slave() const { return slave_; }
    void type_signals() { write_text(to_, "t"); }
    void hang_up() {
        write_text(to_, "q");
        ::waitpid(pid_, nullptr, 0);
        pid_ = -1;
    }

private:
    pid_t pid_ = -1;
    int to_ = -1;
    std::string slave_;
};

// True when the process runs and is not stopped.
bool running(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')');
    return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'T' && stat[close + 2] != 'Z';
}

TEST(serve_attack, a_spooled_request_naming_a_terminal_or_a_root_only_fifo_is_opened_with_the_writers_rights_only) {
    temp_user attacker;
    ASSERT_TRUE(attacker.ok());
    shared_dir spool, secrets;
    // A FIFO only root may open: whoever opens it for reading wakes a writer blocked on it.
    const std::string fifo = secrets.file("root-only.fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    auto writer = std::async(std::launch::async, [&] {
        const int fd = ::open(fifo.c_str(), O_WRONLY);  // blocks until a reader comes
        if (fd >= 0) ::close(fd);
        return fd >= 0;
    });
    // As systemd starts it: a session of its own, no terminal.
    serve_process d({"--spool", spool.path()}, {"setsid"});
    ASSERT_TRUE(d.ready()) << d.log();
    ASSERT_EQ(tty_of(d.pid()), 0);
    terminal_holder holder(attacker, spool.path(), fifo);
    ASSERT_TRUE(holder.ok());
    // The daemon takes both requests (inotify) and says why neither dump can be adopted.
    std::string log;
    for (int i = 0; i < 100; ++i) {
        log = d.log();
        if (log.find("-spool-attack-1 of pid 1: the JVM's dump") != std::string::npos &&
            log.find("-spool-attack-0 of pid 1: the JVM's dump") != std::string::npos)
            break;
        std::this_thread::sleep_for(100ms);
    }
    // The requests are named by their key in the OOM intake: the writer and the spool file's name.
    const std::string key = std::to_string(attacker.uid()) + "-spool-attack-";
    EXPECT_NE(log.find(key + "0 of pid 1: the JVM's dump " + holder.slave() + " cannot be adopted"), std::string::npos)
        << log;
    EXPECT_NE(log.find(fifo + " cannot be adopted for uid " + std::to_string(attacker.uid()) + " (cannot open"),
              std::string::npos)
        << log;
    EXPECT_EQ(tty_of(d.pid()), 0) << "the attacker's terminal became the daemon's";
    holder.type_signals();
    std::this_thread::sleep_for(500ms);
    EXPECT_TRUE(running(d.pid())) << d.log();
    holder.hang_up();
    std::this_thread::sleep_for(500ms);
    EXPECT_TRUE(running(d.pid())) << d.log();
    EXPECT_EQ(run_heapctl(d, {"status"}).exit_code, 0) << d.log();
    EXPECT_EQ(d.log().find("stopping on"), std::string::npos) << d.log();
    // Nobody opened the FIFO for reading: the blocked writer is still waiting.
    EXPECT_EQ(writer.wait_for(1s), std::future_status::timeout) << "the daemon opened the root-only FIFO";
    const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // lets the writer go
    writer.wait();
    if (reader >= 0) ::close(reader);
}

// A victim's file the attacker may write (a careless 0666 file), filled with a request naming the
// victim's JVM as out of memory and hard-linked into the spool (fs.protected_hardlinks lets anyone
// who may write a file link it): the file's owner did not put it there, so it is no request of
// theirs. The daemon, reading the spool at its next start, removes the link unread and dumps
// nothing; the victim's file stays.
TEST(serve_attack, a_request_hard_linked_from_another_users_file_is_not_taken_for_theirs) {
    temp_user victim, attacker;
    ASSERT_TRUE(victim.ok() && attacker.ok());
    isolated_jvm jvm = attach_target_of(victim);
    ASSERT_TRUE(jvm.ready());
    shared_dir spool, files;
    serve_process d({"--spool", spool.path()}, {"setsid"});
    ASSERT_TRUE(d.ready()) << d.log();
    const std::string careless = files.file("victims-notes.json");
    std::ofstream(careless) << "notes\n";
    ASSERT_EQ(::chown(careless.c_str(), victim.uid(), victim.gid()), 0);
    ASSERT_EQ(::chmod(careless.c_str(), 0666), 0);
    const std::string forged = wire::json{
        {"pid", jvm.pid()},
        {"trigger", "oom"},
        {"oom_kind", "direct-buffer"},
        {"error", "forged by the attacker"},
        {"request_id", "forged"}}.dump();
    const std::string link = spool.path() + "/dump-forged.json";
    auto planted = run_command({"setpriv", "--reuid", std::to_string(attacker.uid()), "--regid",
                                std::to_string(attacker.gid()), "--clear-groups", "sh", "-c",
                                "printf '%s' \"$0\" > \"$1\" && ln \"$1\" \"$2\"", forged, careless, link});
    ASSERT_EQ(planted.exit_code, 0) << planted.err;
    // A link makes no event the spool's watch waits for (a file closed or moved in): the spool is
    // read whole at the next start.
    ASSERT_EQ(d.stop(), 0) << d.log();
    ASSERT_TRUE(d.start()) << d.log();
    std::string log;
    for (int i = 0; i < 100 && (log = d.log()).find("a hard link (2 names)") == std::string::npos; ++i)
        std::this_thread::sleep_for(100ms);
    EXPECT_NE(log.find("a hard link (2 names)"), std::string::npos) << log;
    std::this_thread::sleep_for(2s);  // a dump of the victim's JVM would be under way by now
    auto dumps = run_heapctl(d, {"dumps", "--json"});
    ASSERT_EQ(dumps.exit_code, 0) << dumps.err;
    EXPECT_EQ(wire::json::parse(dumps.out), wire::json::array()) << dumps.out << d.log();
    auto jobs = run_heapctl(d, {"jobs", "--json"});
    EXPECT_EQ(wire::json::parse(jobs.out), wire::json::array()) << jobs.out;
    EXPECT_FALSE(std::filesystem::exists(link));
    EXPECT_TRUE(std::filesystem::exists(careless));
}

}  // namespace
}  // namespace heapd::test
