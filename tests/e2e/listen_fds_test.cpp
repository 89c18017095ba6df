// Socket activation end to end: `systemd-socket-activate -l PATH heapd serve` (what heapd.socket
// does) passes a listening socket; heapd serves requests through it, says so, and leaves the
// socket in place when it stops. A socket of the wrong kind is refused; variables meant for
// another process are ignored.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include "support/jvm_process.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

// Runs heapd under systemd-socket-activate, listening on heapd's --socket argument ($5 of the
// shell: heapd serve --foreground --socket PATH ...). Without -E, systemd-socket-activate passes
// heapd no environment but the LISTEN_* variables.
std::vector<std::string> socket_activate(std::vector<std::string> options = {}) {
    std::string script = "exec systemd-socket-activate";
    for (const std::string& o : options) script += " " + o;
    script += " -l \"$5\" \"$@\"";
    return {"sh", "-c", script, "sh"};
}

ino_t inode_of(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) ? st.st_ino : 0;
}

TEST(listen_fds, serves_the_socket_it_was_passed_and_leaves_it_in_place) {
    serve_process d({}, socket_activate());
    ASSERT_TRUE(d.ready()) << d.log();
    const ino_t made_by_activation = inode_of(d.socket());
    ASSERT_NE(made_by_activation, 0u);
    EXPECT_NE(d.log().find("socket activation: serving " + d.socket() + ", passed by the service manager"),
              std::string::npos)
        << d.log();

    // heapctl's request, answered by the daemon through the inherited socket.
    auto status = run_command({heapctl_binary(), "--socket", d.socket(), "status", "--json"});
    ASSERT_EQ(status.exit_code, 0) << status.err;
    auto reply = wire::json::parse(status.out, nullptr, false);
    ASSERT_TRUE(reply.is_object()) << status.out;
    EXPECT_EQ(reply["pid"], d.pid());  // systemd-socket-activate execs heapd: same pid
    EXPECT_EQ(reply["socket"], d.socket());

    EXPECT_EQ(d.stop(SIGTERM), 0) << d.log();
    // The socket belongs to the service manager: still there, the same one.
    EXPECT_EQ(inode_of(d.socket()), made_by_activation);
    EXPECT_NE(d.log().find("stopped"), std::string::npos) << d.log();
}

// heapd serve, as passed the descriptors a launcher made, with a store in dir; what it printed.
command_result serve_with(const shared_dir& dir, std::vector<std::string> launcher) {
    for (const std::string& a : {heapd_binary(), std::string("serve"), std::string("--foreground"),
                                 std::string("--oom-arm"), std::string("hooked"), std::string("--socket"),
                                 dir.file("heapd.sock"), std::string("--store"), dir.file("store")})
        launcher.push_back(a);
    launcher.insert(launcher.begin(), {"timeout", "60"});
    return run_command(launcher);
}

TEST(listen_fds, a_datagram_socket_is_refused_with_a_reason) {
    shared_dir dir;
    const std::string path = dir.file("heapd.sock");
    std::atomic<bool> done = false;
    command_result r;
    std::thread run([&] {
        r = serve_with(dir, {"systemd-socket-activate", "--datagram", "-l", path});
        done = true;
    });
    // systemd-socket-activate starts heapd when a datagram arrives.
    int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    path.copy(addr.sun_path, sizeof addr.sun_path - 1);
    while (!done) {
        (void)::sendto(fd, "x", 1, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ::close(fd);
    run.join();
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("cannot serve: socket activation: descriptor 3 is not a Unix stream socket"),
              std::string::npos)
        << r.err;
}

TEST(listen_fds, a_descriptor_that_is_no_socket_is_refused_with_a_reason) {
    shared_dir dir;
    // fd 3 is /dev/null, LISTEN_PID the shell's pid, which heapd keeps through exec.
    auto r = serve_with(dir, {"sh", "-c", "exec 3</dev/null; LISTEN_FDS=1 LISTEN_PID=$$ exec \"$@\"", "sh"});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("cannot serve: socket activation: descriptor 3 is not a socket"), std::string::npos) << r.err;
}

TEST(listen_fds, variables_naming_another_process_are_ignored_and_heapd_binds_its_own) {
    // LISTEN_PID is pid 1's: the descriptors are not heapd's, whatever fd 3 is.
    serve_process d({}, {"env", "LISTEN_FDS=1", "LISTEN_PID=1"});
    ASSERT_TRUE(d.ready()) << d.log();
    EXPECT_EQ(d.log().find("socket activation"), std::string::npos) << d.log();
    EXPECT_NE(inode_of(d.socket()), 0u);
    EXPECT_EQ(d.stop(SIGTERM), 0) << d.log();
    EXPECT_EQ(inode_of(d.socket()), 0u);  // its own socket, removed
}

}  // namespace
}  // namespace heapd::test
