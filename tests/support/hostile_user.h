#pragma once
// A local user attacking the daemon, for the tests that prove heapd holds against one: a listener
// on their own JVM's attach socket that answers as they like, connections held or passed back,
// requests sent as them, and what the tests read off the daemon and the JVM's /tmp afterwards.
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "formats/wire/protocol.h"
#include "support/isolated_jvm.h"
#include "support/serve_process.h"

namespace heapd::test {

// Takes the user's ids for good (a child of the test only).
inline bool become(const temp_user& user) {
    return ::setgroups(0, nullptr) == 0 && ::setresgid(user.gid(), user.gid(), user.gid()) == 0 &&
           ::setresuid(user.uid(), user.uid(), user.uid()) == 0;
}

// The request a v1 attach client sent: five NUL-terminated strings (version, command, 3 arguments).
inline std::vector<std::string> read_attach_request(int fd) {
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

inline void write_text(int fd, const std::string& text) { (void)!::write(fd, text.data(), text.size()); }

// A heap dump from another project's tests, for files the attacks plant or pass.
inline const std::string peer_dump = std::string(HEAPD_PEER_DATA) + "/hprof-64.bin";

// The user's own JVM (tests/java/AttachTarget.java, 64 MiB heap), as another user's JVM is dumped.
inline isolated_jvm attach_target_of(const temp_user& user) {
    return isolated_jvm(java_main{"AttachTarget"}, {"-Xmx64m"}, {}, isolation{&user, false, {}});
}

// What the hostile listener does when asked for a heap dump (or, for the last two, anything).
enum class hostile_act {
    swap_with_link,  // writes a file at the name asked for and keeps exchanging it with a link to a target
    stay_silent,     // accepts the request and never answers
    flood,           // answers with 64 MiB of output, lines that look like the daemon's log among them
    trickle,         // any request: answers "0\n", then one byte every 10 s for 90 s
    hang_up,         // a heap dump request: reads it and closes the connection without a word
    fake_agent,      // an agent `load`: writes the answer file asked for with what the file named by the
                     // detail holds (DETAIL.cpu for cpu_* commands, DETAIL.sites for the others)
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
            ::setpgid(0, 0);  // its swapper and tricklers too go with it
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
        for (const auto& e : std::filesystem::directory_iterator(tmp_, ec)) {
            const std::string name = e.path().filename().string();
            if (name.starts_with(staged) || name == ".java_pid" + std::to_string(ns_pid_))
                std::filesystem::remove(e.path(), ec);
        }
    }
    bool ok() const { return ok_; }

private:
    [[noreturn]] static void serve(const temp_user& user, pid_t jvm_pid, pid_t ns_pid, hostile_act act,
                                   const std::string& link_target, int ready) {
        const std::string tmp = "/proc/" + std::to_string(jvm_pid) + "/root/tmp";
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::snprintf(addr.sun_path, sizeof addr.sun_path, ".java_pid%d", static_cast<int>(ns_pid));
        // The JVM was never attached to: a socket of that name is another's, left by a JVM that had
        // the same pid and was killed; as root, since the sticky /tmp keeps the user from removing it.
        if (::chdir(tmp.c_str()) != 0) ::_exit(1);
        ::unlink(addr.sun_path);
        if (!become(user)) ::_exit(1);
        int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
        if (s < 0 || ::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(s, 8) != 0) ::_exit(1);
        write_text(ready, "r");
        for (;;) {
            int c = ::accept(s, nullptr, nullptr);
            if (c < 0) continue;
            auto request = read_attach_request(c);
            if (act == hostile_act::trickle && request.size() >= 2 && request[1] != "getversion") {
                if (::fork() == 0) {  // each connection on its own, as many as are asked
                    write_text(c, "0\n");
                    for (int i = 0; i < 9; ++i) {
                        ::sleep(10);
                        write_text(c, ".");
                    }
                    ::_exit(0);
                }
                ::close(c);
                continue;
            }
            if (act == hostile_act::fake_agent && request.size() >= 5 && request[1] == "load") {
                answer_as_agent(c, request[4], link_target);
                continue;
            }
            if (request.size() < 3 || request[1] != "dumpheap") {
                write_text(c, "-1\nOperation not recognized!\n");  // the getversion probe: an old JVM
                ::close(c);
                continue;
            }
            if (act == hostile_act::stay_silent) {
                ::pause();
                ::_exit(0);
            }
            if (act == hostile_act::hang_up) {
                ::close(c);
                continue;
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
            swap_while_answering(c, std::filesystem::path(request[2]).filename().string(), link_target);
        }
    }

    // Writes the answer file the options ("show,...,file=/tmp/NAME") ask for, from DETAIL.cpu or
    // DETAIL.sites, and answers as a JVM whose agent took the command.
    static void answer_as_agent(int c, const std::string& options, const std::string& detail) {
        const auto at = options.find("file=/tmp/");
        if (at != std::string::npos) {
            const std::string name = options.substr(at + 10, options.find(',', at) - at - 10);
            std::ifstream in(detail + (options.starts_with("cpu_") ? ".cpu" : ".sites"));
            std::ofstream(name) << in.rdbuf();
        }
        write_text(c, "0\nreturn code: 0\n");
        ::close(c);
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
inline std::optional<wire::reply> request_as(const temp_user& user, const std::string& socket, const wire::request& r,
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
        while (reply && reply->kind == wire::reply_kind::progress) reply = c.read_reply(std::chrono::seconds(60));
        if (!reply) ::_exit(3);
        auto frame = wire::encode_reply(*reply);
        if (!frame) ::_exit(4);
        write_text(out[1], *frame);
        ::_exit(0);
    }
    ::close(out[1]);
    wire::frame_parser parser{std::uint32_t{1} << 24};
    char buffer[4096];
    for (ssize_t n; (n = ::read(out[0], buffer, sizeof buffer)) > 0;)
        (void)parser.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
    ::close(out[0]);
    ::waitpid(child, nullptr, 0);
    auto frame = parser.next();
    if (!frame) return std::nullopt;
    auto reply = wire::decode_reply(*frame);
    if (!reply) return std::nullopt;
    return *reply;
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
                    if (!c->send_request({1, "status", wire::json::object()}, c->fd())) continue;
                    auto r = c->read_reply(std::chrono::seconds(10));
                    if (r && r->kind == wire::reply_kind::result) ++taken;
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

inline std::size_t open_descriptors(pid_t pid) {
    std::size_t n = 0;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
         it != std::filesystem::directory_iterator(); it.increment(ec))
        ++n;
    return n;
}

// The peak resident memory of a process (VmHWM), in bytes.
inline std::uint64_t peak_rss(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(in, line);)
        if (line.starts_with("VmHWM:")) return std::stoull(line.substr(6)) * 1024;
    return 0;
}

// The staged dumps (heapd-dump-NSPID-*) in the JVM's /tmp.
inline std::vector<std::string> staged_in(pid_t jvm, pid_t ns_pid) {
    std::vector<std::string> found;
    std::error_code ec;
    const std::string prefix = "heapd-dump-" + std::to_string(ns_pid) + "-";
    for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(jvm) + "/root/tmp", ec))
        if (e.path().filename().string().starts_with(prefix)) found.push_back(e.path());
    return found;
}

// A user's own JVM whose attach socket the user serves with a hostile listener.
struct hostile_jvm {
    hostile_jvm(const temp_user& user, hostile_act act, std::string link_target = {})
        : jvm(attach_target_of(user)), listener(user, jvm.pid(), jvm.ns_pid(), act, std::move(link_target)) {}
    bool ok() const { return jvm.ready() && listener.ok(); }
    isolated_jvm jvm;
    hostile_listener listener;
};

}  // namespace heapd::test
