// The daemon attacked by a local user who owns one JVM and nothing else (a user made for the test):
// they serve their JVM's attach socket themselves and swap the staged dump's name for a link to a
// file only root may read; they claim another user's JVM for a file of their own (adopt); and they
// leave the daemon's attach helper waiting on them while the daemon is killed. Nothing outside the
// store may change, no report of someone else's file may be made, and a restart must not be refused.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <thread>

#include "formats/protocol.h"
#include "tests/support/isolated_jvm.h"
#include "tests/support/jvm_process.h"
#include "tests/support/serve_process.h"

namespace heapd::test {
namespace {

namespace fs = std::filesystem;
using wire::json;
using wire::reply_kind;

const std::string peer_dump = std::string(HEAPD_PEER_DATA) + "/hprof-64.bin";

// Takes the user's ids for good (a child of the test only).
bool become(const temp_user& user) {
    return ::setgroups(0, nullptr) == 0 && ::setresgid(user.gid(), user.gid(), user.gid()) == 0 &&
           ::setresuid(user.uid(), user.uid(), user.uid()) == 0;
}

// The request a v1 attach client sent: five NUL-terminated strings (version, command, 3 arguments).
std::vector<std::string> read_attach_request(int fd) {
    std::string bytes;
    char c;
    while (std::count(bytes.begin(), bytes.end(), '\0') < 5 && bytes.size() < 8192 && ::read(fd, &c, 1) == 1)
        bytes.push_back(c);
    std::vector<std::string> parts;
    for (std::size_t at = 0; at < bytes.size();) {
        std::size_t end = bytes.find('\0', at);
        if (end == std::string::npos) break;
        parts.push_back(bytes.substr(at, end - at));
        at = end + 1;
    }
    return parts;
}

void write_text(int fd, const std::string& text) { (void)!::write(fd, text.data(), text.size()); }

// What the hostile listener does when asked for a heap dump.
enum class hostile_act {
    swap_with_link,  // writes a file at the name asked for and keeps exchanging it with a link to a target
    stay_silent,     // accepts the request and never answers
    flood,           // answers with 64 MiB of output, lines that look like the daemon's log among them
};

// The attach listener of a JVM served by the JVM's owner: a process of the test running as that
// user, bound at the JVM's socket name in the JVM's /tmp; removed (killed, socket unlinked) at the end.
class hostile_listener {
public:
    hostile_listener(const temp_user& user, pid_t jvm_pid, pid_t ns_pid, hostile_act act, std::string link_target)
        : tmp_("/proc/" + std::to_string(jvm_pid) + "/root/tmp"), ns_pid_(ns_pid) {
        int ready[2];
        if (::pipe(ready) != 0) return;
        pid_ = ::fork();
        if (pid_ == 0) {
            ::close(ready[0]);
            ::setpgid(0, 0);  // its swapper too goes with it
            serve(user, jvm_pid, ns_pid, act, link_target, ready[1]);
        }
        ::close(ready[1]);
        char byte = 0;
        ok_ = pid_ > 0 && ::read(ready[0], &byte, 1) == 1 && byte == 'r';
        ::close(ready[0]);
    }
    ~hostile_listener() {
        if (pid_ > 0) {
            ::kill(-pid_, SIGKILL);
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        // What it made in the JVM's /tmp: its socket, and staged names it was swapping when killed.
        const std::string staged = "heapd-dump-" + std::to_string(ns_pid_) + "-";
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(tmp_, ec)) {
            const std::string name = e.path().filename().string();
            if (name.starts_with(staged) || name == ".java_pid" + std::to_string(ns_pid_)) fs::remove(e.path(), ec);
        }
    }
    bool ok() const { return ok_; }

private:
    [[noreturn]] static void serve(const temp_user& user, pid_t jvm_pid, pid_t ns_pid, hostile_act act,
                                   const std::string& link_target, int ready) {
        const std::string tmp = "/proc/" + std::to_string(jvm_pid) + "/root/tmp";
        if (::chdir(tmp.c_str()) != 0 || !become(user)) ::_exit(1);
        int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::snprintf(addr.sun_path, sizeof addr.sun_path, ".java_pid%d", static_cast<int>(ns_pid));
        ::unlink(addr.sun_path);
        if (s < 0 || ::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(s, 8) != 0) ::_exit(1);
        write_text(ready, "r");
        for (;;) {
            int c = ::accept(s, nullptr, nullptr);
            if (c < 0) continue;
            auto request = read_attach_request(c);
            if (request.size() < 3 || request[1] != "dumpheap") {
                write_text(c, "-1\nOperation not recognized!\n");  // the getversion probe: an old JVM
                ::close(c);
                continue;
            }
            if (act == hostile_act::stay_silent) {
                ::pause();
                ::_exit(0);
            }
            if (act == hostile_act::flood) {
                write_text(c, "0\n");
                const std::string forged = "\n[2026-01-01 00:00:00.000] [heapd] [info] FORGED LOG LINE\n";
                std::string chunk(1 << 20, 'A');
                chunk.replace(0, forged.size(), forged);
                for (int i = 0; i < 64; ++i) write_text(c, chunk);
                ::close(c);
                continue;
            }
            swap_while_answering(c, fs::path(request[2]).filename().string(), link_target);
        }
    }

    // Writes a regular file at name (not a heap dump) and a link beside it, then exchanges the two
    // names without pause (renameat2 RENAME_EXCHANGE: the name is always one or the other) from before
    // the answer until well after it; both are removed at the end.
    static void swap_while_answering(int c, const std::string& name, const std::string& link_target) {
        const std::string other = name + ".swap";
        {
            std::ofstream out(name);
            out << "not a heap dump, the attacker's own bytes\n";
        }
        ::symlink(link_target.c_str(), other.c_str());
        pid_t swapper = ::fork();
        if (swapper == 0) {
            ::close(c);  // the connection ends when the answer is written, not when swapping stops
            const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(1000);
            while (std::chrono::steady_clock::now() < end)
                ::renameat2(AT_FDCWD, name.c_str(), AT_FDCWD, other.c_str(), RENAME_EXCHANGE);
            ::_exit(0);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        write_text(c, "0\nHeap dump file created\n");
        ::close(c);
        ::waitpid(swapper, nullptr, 0);
        ::unlink(name.c_str());
        ::unlink(other.c_str());
    }

    std::string tmp_;
    pid_t ns_pid_ = -1;
    pid_t pid_ = -1;
    bool ok_ = false;
};

// A request sent as user on a connection of its own, with a descriptor passed along; the reply.
std::optional<wire::reply> request_as(const temp_user& user, const std::string& socket, const wire::request& r,
                                      int pass_fd) {
    int out[2];
    if (::pipe(out) != 0) return std::nullopt;
    pid_t child = ::fork();
    if (child == 0) {
        ::close(out[0]);
        if (!become(user)) ::_exit(1);
        raw_client c(socket);
        if (!c.send_request(r, pass_fd)) ::_exit(2);
        auto reply = c.read_reply(std::chrono::seconds(60));
        while (reply && reply->kind == reply_kind::progress) reply = c.read_reply(std::chrono::seconds(60));
        if (!reply) ::_exit(3);
        auto frame = wire::encode_reply(*reply);
        if (!frame) ::_exit(4);
        write_text(out[1], *frame);
        ::_exit(0);
    }
    ::close(out[1]);
    wire::frame_parser parser{std::uint32_t{1} << 24};
    char buffer[4096];
    for (ssize_t n; (n = ::read(out[0], buffer, sizeof buffer)) > 0;) (void)parser.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
    ::close(out[0]);
    ::waitpid(child, nullptr, 0);
    auto frame = parser.next();
    if (!frame) return std::nullopt;
    auto reply = wire::decode_reply(*frame);
    if (!reply) return std::nullopt;
    return *reply;
}

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
    for (auto it = fs::recursive_directory_iterator(root, ec); it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_symlink(ec)) found.push_back(it->path());
    return found;
}

TEST(serve_attack, a_jvm_owner_swapping_the_staged_dump_for_a_link_reaches_nothing_outside_the_store) {
    temp_user attacker;
    ASSERT_TRUE(attacker.ok());
    // The attacker's own JVM, as a JVM of another user is dumped: staged in its /tmp, then taken out.
    isolated_jvm jvm(java_main{"AttachTarget"}, {"-Xmx64m"}, {}, isolation{&attacker, false, {}});
    ASSERT_TRUE(jvm.ready());
    // The file the link names: a heap dump only root may read.
    shared_dir secrets;
    const std::string secret = secrets.file("root-only.hprof");
    fs::copy_file(peer_dump, secret);
    ASSERT_EQ(::chmod(secret.c_str(), 0600), 0);
    const file_state before = state_of(secret);
    hostile_listener listener(attacker, jvm.pid(), jvm.ns_pid(), hostile_act::swap_with_link, secret);
    ASSERT_TRUE(listener.ok());
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();

    // The race is the attacker's to win once in many tries; each try is a whole dump request.
    for (int attempt = 0; attempt < 20; ++attempt) {
        auto r = run_heapctl(d, {"dump", std::to_string(jvm.pid()), "--wait", "--json"}, &attacker);
        EXPECT_NE(r.exit_code, 0) << "attempt " << attempt << ": a dump was made of what the attacker served\n"
                                  << r.out;
        ASSERT_EQ(state_of(secret), before) << "attempt " << attempt << " changed the root-only file\n"
                                            << r.out << r.err << d.log();
        EXPECT_EQ(r.out.find("java.lang."), std::string::npos) << "attempt " << attempt << " reported the file:\n" << r.out;
    }
    EXPECT_EQ(json::parse(run_heapctl(d, {"dumps", "--json"}).out).size(), 0u);
    EXPECT_EQ(links_under(d.store()), std::vector<std::string>{});
    // Each try ends refused: the link not followed, the file refused, or the attacker's own bytes
    // analysed (with the attacker's rights) and found not to be a heap dump.
    for (const json& job : json::parse(run_heapctl(d, {"jobs", "--json"}).out)) {
        const std::string error = job.value("error", "");
        EXPECT_TRUE(error.find("Too many levels of symbolic links") != std::string::npos ||
                    error.find("not taken") != std::string::npos || error.find("not an HPROF file") != std::string::npos)
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
    isolated_jvm jvm(java_main{"AttachTarget"}, {"-Xmx64m"}, {}, isolation{&victim, false, {}});
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
                            {1, "dump", {{"pid", jvm.pid()}, {"adopt", true}, {"wait", true}, {"trigger", "oom"},
                                         {"start_time", claimed}, {"dump_path", "/tmp/java_pid1.hprof"}}},
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

TEST(serve_attack, a_killed_daemon_restarts_at_once_while_its_attach_helper_still_waits_on_a_jvm) {
    temp_user owner;
    ASSERT_TRUE(owner.ok());
    isolated_jvm jvm(java_main{"AttachTarget"}, {"-Xmx64m"}, {}, isolation{&owner, false, {}});
    ASSERT_TRUE(jvm.ready());
    hostile_listener listener(owner, jvm.pid(), jvm.ns_pid(), hostile_act::stay_silent, "");
    ASSERT_TRUE(listener.ok());
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

// A process of the test running as user that connects n times to socket and keeps the connections
// (each one passing its own descriptor along with a status request, when pass_own); it says how
// many connections the daemon took, then waits until killed (or exits at once, with exit_after).
class connection_holder {
public:
    connection_holder(const temp_user& user, const std::string& socket, int n, bool pass_own, bool exit_after) {
        int out[2];
        if (::pipe(out) != 0) return;
        pid_ = ::fork();
        if (pid_ == 0) {
            ::close(out[0]);
            if (!become(user)) ::_exit(1);
            std::vector<std::unique_ptr<raw_client>> held;
            int taken = 0;
            for (int i = 0; i < n; ++i) {
                auto c = std::make_unique<raw_client>(socket);
                if (!c->connected()) continue;
                if (pass_own) {
                    // A status request carrying the client's own socket: answered, the descriptor unused.
                    if (!c->send_request({1, "status", json::object()}, c->fd())) continue;
                    auto r = c->read_reply(std::chrono::seconds(10));
                    if (r && r->kind == reply_kind::result) ++taken;
                } else {
                    ++taken;
                }
                held.push_back(std::move(c));
            }
            write_text(out[1], std::to_string(taken) + "\n");
            if (exit_after) ::_exit(0);
            for (;;) ::pause();
        }
        ::close(out[1]);
        char buffer[32] = {};
        ssize_t got = ::read(out[0], buffer, sizeof buffer - 1);
        ::close(out[0]);
        if (got > 0) taken_ = std::atoi(buffer);
        if (exit_after) {
            ::waitpid(pid_, nullptr, 0);
            pid_ = -1;
        }
    }
    ~connection_holder() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
    }
    int taken() const { return taken_; }

private:
    pid_t pid_ = -1;
    int taken_ = -1;
};

std::size_t open_descriptors(pid_t pid) {
    std::size_t n = 0;
    std::error_code ec;
    for (auto it = fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec); it != fs::directory_iterator();
         it.increment(ec))
        ++n;
    return n;
}

TEST(serve_attack, a_user_holding_300_connections_leaves_root_served_at_once) {
    temp_user attacker;
    ASSERT_TRUE(attacker.ok());
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    connection_holder hog(attacker, d.socket(), 300, false, false);
    ASSERT_GT(hog.taken(), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the daemon has seen them all

    const auto start = std::chrono::steady_clock::now();
    auto status = run_heapctl(d, {"status"});
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(status.exit_code, 0) << status.err;
    std::cout << "root's status with 300 connections of another user held: " << seconds << " s\n";
    // The user themself is told why (once the daemon has taken the flood off its listen queue).
    const std::string why = "too many connections of uid " + std::to_string(attacker.uid());
    auto theirs = run_heapctl(d, {"status"}, &attacker);
    for (int i = 0; i < 20 && theirs.err.find(why) == std::string::npos; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        theirs = run_heapctl(d, {"status"}, &attacker);
    }
    EXPECT_NE(theirs.exit_code, 0);
    EXPECT_NE(theirs.err.find(why), std::string::npos) << theirs.err;
}

TEST(serve_attack, connections_that_passed_their_own_socket_close_when_their_client_exits) {
    temp_user attacker;
    ASSERT_TRUE(attacker.ok());
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    const std::size_t before = open_descriptors(d.pid());
    connection_holder gone(attacker, d.socket(), 20, true, true);
    ASSERT_EQ(gone.taken(), 20);
    std::size_t now = open_descriptors(d.pid());
    for (int i = 0; i < 50 && now > before; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        now = open_descriptors(d.pid());
    }
    EXPECT_LE(now, before) << "descriptors the exited client left open in the daemon";
    EXPECT_EQ(run_heapctl(d, {"status"}, &attacker).exit_code, 0);
}

TEST(serve_attack, an_idle_connection_is_closed_after_the_idle_timeout) {
    shared_dir conf;
    const std::string config = conf.file("heapd.toml");
    { std::ofstream(config) << "[daemon]\nidle_timeout = \"1s\"\n"; }
    serve_process short_idle({"--config", config});
    ASSERT_TRUE(short_idle.ready()) << short_idle.log();
    raw_client idle(short_idle.socket());
    ASSERT_TRUE(idle.connected());
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(idle.closed_by_daemon(std::chrono::seconds(10)));
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(900));
    // A client that keeps asking stays.
    raw_client busy(short_idle.socket());
    for (int i = 0; i < 4; ++i) {
        ASSERT_TRUE(busy.send_request({static_cast<std::uint64_t>(i + 1), "status", json::object()}));
        auto r = busy.read_reply(std::chrono::seconds(5));
        ASSERT_TRUE(r && r->kind == reply_kind::result) << "request " << i;
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
}

// The peak resident memory of a process (VmHWM), in bytes.
std::uint64_t peak_rss(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(in, line);)
        if (line.starts_with("VmHWM:")) return std::stoull(line.substr(6)) * 1024;
    return 0;
}

TEST(serve_attack, a_file_of_zeros_after_a_valid_header_gives_a_bounded_report) {
    temp_user attacker;
    ASSERT_TRUE(attacker.ok());
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    shared_dir files;
    const std::string zeros = files.file("zeros.hprof");
    {
        std::ofstream out(zeros, std::ios::binary);
        const char header[] = "JAVA PROFILE 1.0.2";
        out.write(header, sizeof header);  // with its NUL
        const char id_size_and_time[12] = {0, 0, 0, 8};
        out.write(id_size_and_time, sizeof id_size_and_time);
        std::string megabyte(1 << 20, '\0');
        for (int i = 0; i < 10; ++i) out << megabyte;  // 1.16 million empty records of tag 0
    }
    ASSERT_EQ(::chown(zeros.c_str(), attacker.uid(), attacker.gid()), 0);
    auto r = run_heapctl(d, {"report", "--json", zeros}, &attacker);
    ASSERT_EQ(r.exit_code, 2) << r.err;  // a damaged dump
    EXPECT_NE(r.err.find("more problems like these, not listed"), std::string::npos);
    EXPECT_LT(r.err.size(), 64u << 10);
    json report = json::parse(r.out);
    EXPECT_LE(report["problems"].size(), 100u);
    EXPECT_GT(report.value("problems_omitted", 0u), 1000000u);
    EXPECT_LT(r.out.size(), 1u << 20);
    std::uint64_t stored = 0;
    for (const auto& e : fs::recursive_directory_iterator(d.store() + "/entries"))
        if (e.path().filename() == "report.json") stored = std::max<std::uint64_t>(stored, e.file_size());
    EXPECT_LT(stored, 1u << 20);
    const std::uint64_t daemon_peak = peak_rss(d.pid());
    std::cout << "10 MiB of zeros: report " << r.out.size() << " bytes, daemon peak RSS " << (daemon_peak >> 20)
              << " MiB\n";
    EXPECT_LT(daemon_peak, std::uint64_t{256} << 20);
}

TEST(serve_attack, a_gzip_bomb_is_refused_once_it_outgrows_the_store_and_leaves_nothing) {
    temp_user attacker;
    ASSERT_TRUE(attacker.ok());
    serve_process d({}, small_store_launcher("200m"));  // room for about 136 MB past the 64 MB reserve
    ASSERT_TRUE(d.ready()) << d.log();
    shared_dir files;
    const std::string bomb = files.file("bomb.hprof.gz");
    auto made = run_command({"sh", "-c", "{ printf 'JAVA PROFILE 1.0.2\\000\\000\\000\\000\\010'; head -c 8 /dev/zero; "
                                         "head -c 1G /dev/zero; } | gzip -1 > " + bomb});
    ASSERT_EQ(made.exit_code, 0) << made.err;
    ASSERT_LT(fs::file_size(bomb), 8u << 20);
    ASSERT_EQ(::chown(bomb.c_str(), attacker.uid(), attacker.gid()), 0);
    auto r = run_heapctl(d, {"report", bomb}, &attacker);
    EXPECT_NE(r.exit_code, 0) << r.out;
    EXPECT_NE(r.err.find("inflates to more than"), std::string::npos) << r.err;
    // Nothing of it is left in the store's file system.
    auto df = run_command({"nsenter", "--mount=/proc/" + std::to_string(d.pid()) + "/ns/mnt", "df", "-B1",
                           "--output=used", d.store()});
    ASSERT_EQ(df.exit_code, 0) << df.err;
    const std::uint64_t used = std::stoull(df.out.substr(df.out.find('\n') + 1));
    EXPECT_LT(used, std::uint64_t{4} << 20) << df.out;
    EXPECT_EQ(run_heapctl(d, {"status"}).exit_code, 0);
}

TEST(serve_attack, an_attach_reply_flood_is_kept_bounded_and_cannot_forge_log_lines) {
    temp_user attacker;
    ASSERT_TRUE(attacker.ok());
    isolated_jvm jvm(java_main{"AttachTarget"}, {"-Xmx64m"}, {}, isolation{&attacker, false, {}});
    ASSERT_TRUE(jvm.ready());
    hostile_listener listener(attacker, jvm.pid(), jvm.ns_pid(), hostile_act::flood, "");
    ASSERT_TRUE(listener.ok());
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    auto r = run_heapctl(d, {"dump", std::to_string(jvm.pid()), "--wait"}, &attacker);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_LT(r.err.size(), 16u << 10);
    auto jobs = run_heapctl(d, {"jobs", "--json"});
    ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
    EXPECT_LT(jobs.out.size(), 16u << 10);
    json list = json::parse(jobs.out);
    ASSERT_EQ(list.size(), 1u);
    const std::string error = list[0].value("error", "");
    EXPECT_NE(error.find("wrote no dump"), std::string::npos) << error.substr(0, 200);
    EXPECT_NE(error.find("more bytes)"), std::string::npos) << error.substr(0, 200);
    const std::string log = d.log();
    EXPECT_EQ(log.find("\n[2026-01-01 00:00:00.000] [heapd] [info] FORGED"), std::string::npos);
    EXPECT_LT(log.size(), 64u << 10);
    const std::uint64_t daemon_peak = peak_rss(d.pid());
    std::cout << "64 MiB attach reply: job error " << error.size() << " bytes, log " << log.size()
              << " bytes, daemon peak RSS " << (daemon_peak >> 20) << " MiB\n";
    EXPECT_LT(daemon_peak, std::uint64_t{128} << 20);
}

TEST(serve_attack, one_users_many_reports_do_not_push_out_another_users_dumps) {
    temp_user attacker, victim;
    ASSERT_TRUE(attacker.ok() && victim.ok());
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    shared_dir files;
    const std::string small = files.file("small.hprof");
    fs::copy_file(std::string(HEAPD_PEER_DATA) + "/hprof-32.bin", small);
    ASSERT_EQ(::chmod(small.c_str(), 0644), 0);
    for (int i = 0; i < 2; ++i) ASSERT_EQ(run_heapctl(d, {"report", "--top", "1", small}, &victim).exit_code, 0);
    // More than the store keeps in all (50): before per-user shares, the victim lost every dump.
    for (int i = 0; i < 52; ++i) ASSERT_EQ(run_heapctl(d, {"report", "--top", "1", small}, &attacker).exit_code, 0);
    std::map<uid_t, int> kept;
    for (const json& e : json::parse(run_heapctl(d, {"dumps", "--json"}).out)) ++kept[e["owner_uid"].get<uid_t>()];
    EXPECT_EQ(kept[victim.uid()], 2);
    EXPECT_EQ(kept[attacker.uid()], 20);  // keep_count_per_user
}

TEST(serve_attack, an_oom_hook_refused_during_a_lockout_is_spooled_and_taken_by_the_running_daemon) {
    temp_user owner;
    ASSERT_TRUE(owner.ok());
    isolated_jvm jvm(java_main{"AttachTarget"}, {"-Xmx64m"}, {}, isolation{&owner, false, {}});
    ASSERT_TRUE(jvm.ready());
    shared_dir spool_parent;
    const std::string spool = spool_parent.file("spool");
    serve_process d({"--spool", spool});
    ASSERT_TRUE(d.ready()) << d.log();
    // The JVM's owner has every connection a user may have when the JVM runs out of memory.
    connection_holder hog(owner, d.socket(), 40, false, false);
    ASSERT_GT(hog.taken(), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the daemon has taken 32 and refused the rest
    auto hook = run_command({"setpriv", "--reuid=" + std::to_string(owner.uid()), "--regid=" + std::to_string(owner.gid()),
                             "--clear-groups", heapd_binary(), "dump", std::to_string(jvm.pid()), "--socket",
                             d.socket(), "--spool", spool});
    EXPECT_EQ(hook.exit_code, 0) << hook.out << hook.err;
    // The running daemon takes the spooled request at once and dumps the JVM.
    bool dumped = false;
    for (int i = 0; i < 100 && !dumped; ++i) {
        for (const json& job : json::parse(run_heapctl(d, {"jobs", "--json"}).out))
            dumped = dumped || (job.value("jvm_pid", 0) == jvm.pid() && job.value("trigger", "") == "oom" &&
                                job.value("state", "") == "done");
        if (!dumped) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(dumped) << d.log();
    EXPECT_NE(d.log().find("spooled request"), std::string::npos) << d.log();
}

TEST(serve_attack, a_stopped_jvm_in_its_oom_hook_holds_a_worker_for_30_seconds_at_most) {
    temp_user owner;
    ASSERT_TRUE(owner.ok());
    isolated_jvm jvm(java_main{"AttachTarget"}, {"-Xmx64m"}, {}, isolation{&owner, false, {}});
    ASSERT_TRUE(jvm.ready());
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    ASSERT_EQ(::kill(jvm.pid(), SIGSTOP), 0);
    const auto start = std::chrono::steady_clock::now();
    auto r = request_as(owner, d.socket(),
                        {1, "dump", {{"pid", jvm.pid()}, {"in_oom_hook", true}, {"trigger", "oom"}, {"wait", true}}}, -1);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ::kill(jvm.pid(), SIGCONT);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->kind, reply_kind::error);
    EXPECT_NE(r->error.message.find("has been stopped"), std::string::npos) << r->error.message;
    std::cout << "a stopped JVM held the worker for " << seconds << " s\n";
    EXPECT_LT(seconds, 60.0);  // not the 10 minutes a JVM still in its hook may take
}

TEST(serve_attack, status_is_answered_while_big_stored_reports_are_read) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    ASSERT_EQ(run_heapctl(d, {"report", "--top", "1", peer_dump}).exit_code, 0);
    auto dumps = json::parse(run_heapctl(d, {"dumps", "--json"}).out);
    ASSERT_EQ(dumps.size(), 1u);
    const std::string id = dumps[0]["id"];
    ASSERT_EQ(d.stop(), 0);
    // The stored report made big (400,000 histogram rows, some 40 MB): each read parses all of it.
    const std::string path = d.store() + "/entries/" + id + "/report.json";
    json report = json::parse(std::ifstream(path));
    ASSERT_FALSE(report["histogram"].empty());
    const json row = report["histogram"][0];
    for (int i = 0; i < 400'000; ++i) {
        json r = row;
        r["class"] = "com.example.Generated" + std::to_string(i);
        report["histogram"].push_back(std::move(r));
    }
    { std::ofstream(path) << report.dump(); }
    ASSERT_TRUE(d.start()) << d.log();

    std::vector<std::unique_ptr<raw_client>> readers;
    for (int i = 0; i < 8; ++i) {
        readers.push_back(std::make_unique<raw_client>(d.socket()));
        ASSERT_TRUE(readers.back()->send_request({1, "report", {{"dump", id}, {"top", 1}}}));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the daemon has the 8 requests
    raw_client root(d.socket());
    const auto start = std::chrono::steady_clock::now();
    ASSERT_TRUE(root.send_request({1, "status", json::object()}));
    auto status = root.read_reply(std::chrono::seconds(120));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(status && status->kind == reply_kind::result);
    // Reports still being read when status was answered (none had been before: the io thread read
    // them one after another before it read anything else).
    int pending = 0;
    for (auto& r : readers) pending += r->read_reply(std::chrono::milliseconds(5)).has_value() ? 0 : 1;
    std::cout << "status with 8 reports of a 40 MB stored report under way: " << seconds << " s, " << pending
              << " reports still being read\n";
    EXPECT_GE(pending, 4);
    for (auto& r : readers) {
        auto reply = r->read_reply(std::chrono::seconds(120));
        EXPECT_TRUE(reply && reply->kind == reply_kind::result);
    }
}

} // namespace
} // namespace heapd::test
