// Who may do what through heapctl: another user sees and touches only their own dumps and jobs, the
// heapd group sees everything, and a file the caller cannot read never reaches the daemon. Also
// heapctl's usage errors and its message when no daemon runs.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "formats/wire/protocol.h"
#include "support/isolated_jvm.h"
#include "support/jvm_process.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

using wire::json;

const std::string peer_dump = std::string(HEAPD_PEER_DATA) + "/hprof-64.bin";

// heapctl as root (user == nullptr) or as user, with only that user's own group.
command_result heapctl_as(const temp_user* user, const std::string& socket, std::vector<std::string> args) {
    args.insert(args.begin(), {heapctl_binary(), "--socket", socket});
    if (user != nullptr)
        args.insert(args.begin(), {"setpriv", "--reuid=" + std::to_string(user->uid()),
                                   "--regid=" + std::to_string(user->gid()), "--clear-groups"});
    return run_command(args);
}

std::string group_name(gid_t gid) {
    group* g = ::getgrgid(gid);
    return g != nullptr ? g->gr_name : "";
}

// A copy of the peer dump in dir, owned by root with the given mode.
std::string copy_dump(const shared_dir& dir, const std::string& name, std::filesystem::perms mode) {
    const std::string path = dir.file(name);
    std::filesystem::copy_file(peer_dump, path);
    std::filesystem::permissions(path, mode);
    return path;
}

std::string kept_id(const std::string& out) {
    auto at = out.find("Kept as dump ");
    if (at == std::string::npos) return "";
    at += 13;
    return out.substr(at, out.find(' ', at) - at);
}

TEST(heapctl_access, another_user_sees_and_touches_only_their_own) {
    temp_user admin, other;
    ASSERT_TRUE(admin.ok() && other.ok());
    const std::string admin_group = group_name(admin.gid());
    ASSERT_FALSE(admin_group.empty());
    serve_process d({"--group", admin_group});
    ASSERT_TRUE(d.ready()) << d.log();
    shared_dir files;

    auto mine = heapctl_as(nullptr, d.socket(),
                           {"report", "--top", "3", copy_dump(files, "root.hprof", std::filesystem::perms(0600))});
    ASSERT_EQ(mine.exit_code, 0) << mine.err;
    const std::string root_id = kept_id(mine.out);
    auto theirs = heapctl_as(&other, d.socket(),
                             {"report", "--top", "3", copy_dump(files, "shared.hprof", std::filesystem::perms(0644))});
    ASSERT_EQ(theirs.exit_code, 0) << theirs.err;
    const std::string other_id = kept_id(theirs.out);
    ASSERT_FALSE(root_id.empty() || other_id.empty());

    // The other user: only their own dump and job; root's are refused.
    json dumps = json::parse(heapctl_as(&other, d.socket(), {"dumps", "--json"}).out);
    ASSERT_EQ(dumps.size(), 1u);
    EXPECT_EQ(dumps[0]["id"], other_id);
    EXPECT_EQ(dumps[0]["owner_uid"], other.uid());
    json jobs = json::parse(heapctl_as(&other, d.socket(), {"jobs", "--json"}).out);
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0]["owner_uid"], other.uid());
    auto read_root = heapctl_as(&other, d.socket(), {"report", root_id});
    EXPECT_EQ(read_root.exit_code, 4);
    EXPECT_NE(read_root.err.find("belongs to another user"), std::string::npos) << read_root.err;
    EXPECT_TRUE(read_root.out.empty());
    EXPECT_EQ(heapctl_as(&other, d.socket(), {"rm", root_id}).exit_code, 4);
    EXPECT_EQ(heapctl_as(&other, d.socket(), {"cancel", "1"}).exit_code, 4);  // job 1 is root's
    json status = json::parse(heapctl_as(&other, d.socket(), {"status", "--json"}).out);
    EXPECT_EQ(status["you"]["admin"], false);
    EXPECT_EQ(status["store"]["dumps"], 1);
    EXPECT_EQ(heapctl_as(&other, d.socket(), {"report", other_id}).exit_code, 0);

    // A member of the heapd group sees and reads everything.
    json all = json::parse(heapctl_as(&admin, d.socket(), {"dumps", "--json"}).out);
    EXPECT_EQ(all.size(), 2u);
    EXPECT_EQ(heapctl_as(&admin, d.socket(), {"report", root_id}).exit_code, 0);
    EXPECT_EQ(heapctl_as(&admin, d.socket(), {"report", other_id}).exit_code, 0);
    EXPECT_EQ(json::parse(heapctl_as(&admin, d.socket(), {"status", "--json"}).out)["you"]["admin"], true);

    // Stored reports belong to root and the heapd group, readable by no one else.
    for (const std::string& id : {root_id, other_id}) {
        struct stat st {};
        ASSERT_EQ(::stat((d.store() + "/entries/" + id + "/report.json").c_str(), &st), 0);
        EXPECT_EQ(st.st_uid, 0u);
        EXPECT_EQ(st.st_gid, admin.gid());
        EXPECT_EQ(st.st_mode & 0777, 0640u);
    }
    // The owner may remove their own.
    EXPECT_EQ(heapctl_as(&other, d.socket(), {"rm", other_id}).exit_code, 0);
}

TEST(heapctl_access, a_file_the_caller_cannot_read_never_reaches_the_daemon) {
    temp_user other;
    ASSERT_TRUE(other.ok());
    shared_dir files;
    const std::string secret = copy_dump(files, "secret.hprof", std::filesystem::perms(0600));
    // A socket the test listens on: heapctl must fail before it ever connects.
    const std::string fake = files.file("listening.sock");
    int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    fake.copy(addr.sun_path, sizeof addr.sun_path - 1);
    ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_EQ(::listen(listener, 8), 0);
    ::chmod(fake.c_str(), 0666);
    auto r = heapctl_as(&other, fake, {"report", secret});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("cannot open " + secret + ": Permission denied"), std::string::npos) << r.err;
    EXPECT_LT(::accept(listener, nullptr, nullptr), 0);  // nobody connected
    EXPECT_TRUE(errno == EAGAIN || errno == EWOULDBLOCK);
    // The same against the real daemon: refused by heapctl, no job made.
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    EXPECT_EQ(heapctl_as(&other, d.socket(), {"report", secret}).exit_code, 2);
    EXPECT_EQ(json::parse(heapctl_as(nullptr, d.socket(), {"jobs", "--json"}).out).size(), 0u);
    ::close(listener);
}

TEST(heapctl_access, says_how_to_start_the_daemon_when_none_runs) {
    shared_dir dir;
    const std::string socket = dir.file("none.sock");
    auto r = run_command({heapctl_binary(), "--socket", socket, "status"});
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_NE(r.err.find("heapd is not running: nothing listens on " + socket), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("heapd serve --socket " + socket), std::string::npos) << r.err;
    // HEAPD_SOCKET is the default socket.
    auto env = run_command({"env", "HEAPD_SOCKET=" + socket, heapctl_binary(), "jobs"});
    EXPECT_EQ(env.exit_code, 3);
    EXPECT_NE(env.err.find(socket), std::string::npos) << env.err;
}

TEST(heapctl_access, usage_errors_exit_1_and_help_exits_0) {
    EXPECT_EQ(run_command({heapctl_binary()}).exit_code, 1);
    EXPECT_EQ(run_command({heapctl_binary(), "launch"}).exit_code, 1);
    EXPECT_EQ(run_command({heapctl_binary(), "report"}).exit_code, 1);
    EXPECT_EQ(run_command({heapctl_binary(), "report", "a", "b"}).exit_code, 1);
    EXPECT_EQ(run_command({heapctl_binary(), "report", "--top", "x", "f"}).exit_code, 1);
    EXPECT_EQ(run_command({heapctl_binary(), "status", "--bogus"}).exit_code, 1);
    EXPECT_EQ(run_command({heapctl_binary(), "cancel", "seven"}).exit_code, 1);
    auto help = run_command({heapctl_binary(), "--help"});
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_NE(help.out.find("Exit status:"), std::string::npos);
    EXPECT_NE(
        run_command({heapctl_binary(), "--version"}).out.find("protocol " + std::to_string(wire::protocol_version)),
        std::string::npos);
}

}  // namespace
}  // namespace heapd::test
