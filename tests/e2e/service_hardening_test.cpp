// heapd.service's hardening is enough for heapd's hardest job: the daemon, confined to exactly the
// unit's CapabilityBoundingSet and SupplementaryGroups with NoNewPrivileges (setpriv does what
// systemd does with them) and
// under a read-only system (ProtectSystem=strict, emulated in a mount namespace), dumps a JVM that
// runs as another user, on the host or inside a container (attach as the JVM's user, setns into
// its mount namespace, the dump copied out of its /tmp and removed there), stores it with the
// store's group and analyzes it.
#include <grp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>
#include <string>

#include "support/isolated_jvm.h"
#include "support/jvm_process.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

// The capability names of the unit's CapabilityBoundingSet=, e.g. "CAP_SYS_PTRACE".
std::vector<std::string> unit_capabilities() {
    std::ifstream in(std::string(HEAPD_SOURCE_DIR) + "/systemd/heapd.service.in");
    std::vector<std::string> caps;
    for (std::string line; std::getline(in, line);)
        if (line.starts_with("CapabilityBoundingSet=")) {
            std::istringstream words(line.substr(line.find('=') + 1));
            for (std::string w; words >> w;) caps.push_back(w);
        }
    return caps;
}

// True when the unit has this line.
bool unit_has_line(const std::string& wanted) {
    std::ifstream in(std::string(HEAPD_SOURCE_DIR) + "/systemd/heapd.service.in");
    for (std::string line; std::getline(in, line);)
        if (line == wanted) return true;
    return false;
}

// Numbers of capabilities (linux/capability.h) the unit may name.
const std::map<std::string, int> capability_numbers = {
    {"CAP_CHOWN", 0},       {"CAP_DAC_OVERRIDE", 1}, {"CAP_DAC_READ_SEARCH", 2}, {"CAP_FOWNER", 3},
    {"CAP_KILL", 5},        {"CAP_SETGID", 6},       {"CAP_SETUID", 7},          {"CAP_SYS_CHROOT", 18},
    {"CAP_SYS_PTRACE", 19}, {"CAP_SYS_ADMIN", 21}};

// A field of /proc/PID/status, e.g. "CapEff" (hexadecimal for capabilities).
std::string status_field(pid_t pid, const std::string& name) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(in, line);)
        if (line.starts_with(name + ":")) {
            std::string v = line.substr(name.size() + 1);
            v.erase(0, v.find_first_not_of(" \t"));
            return v;
        }
    return "";
}

// setpriv's --bounding-set for the unit's capabilities ("-all,+sys_ptrace,..."), and their mask.
struct capability_set {
    std::string bounding = "-all";
    std::uint64_t mask = 0;
};

capability_set unit_capability_set() {
    capability_set set;
    for (const std::string& c : unit_capabilities()) {
        EXPECT_TRUE(capability_numbers.count(c)) << c << " in the unit: add its number to this test";
        if (!capability_numbers.count(c)) continue;
        set.mask |= std::uint64_t{1} << capability_numbers.at(c);
        std::string name = c.substr(4);
        std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return std::tolower(ch); });
        set.bounding += ",+" + name;
    }
    return set;
}

// ProtectSystem=strict as systemd makes it: in a mount namespace of heapd's own, every mount
// read-only but /proc, /sys, /dev and the writable paths: here the directory of heapd's store
// (the argument after --store), standing in for ReadWritePaths=.
const char* const protect_system_strict = R"(
prev=; for a in "$@"; do [ "$prev" = --store ] && rw=$(dirname "$a"); prev=$a; done
mount --bind "$rw" "$rw"
awk '{print $2}' /proc/self/mounts | sort -u | while read -r m; do
  case "$m" in /proc|/proc/*|/sys|/sys/*|/dev|/dev/*|"$rw") continue;; esac
  mount -o remount,bind,ro "$m" 2>/dev/null || true
done
exec "$@")";

// The daemon with exactly the unit's capabilities and no new privileges, dumps a JVM of another
// user (in a container or not) and keeps it as the unit's daemon would.
void dumps_another_users_jvm(bool read_only_system, bool container) {
    const capability_set caps = unit_capability_set();
    ASSERT_NE(caps.mask, 0u);
    temp_user user;
    ASSERT_TRUE(user.ok());
    const group* g = ::getgrgid(user.gid());
    ASSERT_NE(g, nullptr);
    // SupplementaryGroups=heapd: the test's store group (the JVM user's) stands in for heapd.
    ASSERT_TRUE(unit_has_line("SupplementaryGroups=heapd"));
    std::vector<std::string> launcher = {"setpriv", "--bounding-set=" + caps.bounding, "--no-new-privs",
                                         "--groups=" + std::to_string(user.gid())};
    if (read_only_system)
        launcher.insert(launcher.begin(),
                        {"unshare", "--mount", "--propagation", "private", "sh", "-c", protect_system_strict, "sh"});
    // The store's group is the JVM user's: the daemon gives stored files to it as a member, without CAP_CHOWN.
    serve_process d({"--group", g->gr_name}, launcher);
    ASSERT_TRUE(d.ready()) << d.log();
    // The daemon runs with those capabilities and no others, and cannot gain any.
    std::ostringstream expected;
    expected << std::hex << std::setw(16) << std::setfill('0') << caps.mask;
    EXPECT_EQ(status_field(d.pid(), "CapEff"), expected.str());
    EXPECT_EQ(status_field(d.pid(), "CapBnd"), expected.str());
    EXPECT_EQ(status_field(d.pid(), "NoNewPrivs"), "1");
    if (read_only_system) {
        // Nothing but its own directory is writable for it.
        auto w = run_command(
            {"nsenter", "--mount=/proc/" + std::to_string(d.pid()) + "/ns/mnt", "touch", "/tmp/heapd-ro-probe"});
        EXPECT_NE(w.exit_code, 0);
        EXPECT_NE(w.err.find("Read-only file system"), std::string::npos) << w.err;
    }

    isolated_jvm jvm(java_main{"Sessions"}, {"-Xmx128m"}, {"2000"}, isolation{&user, container});
    ASSERT_TRUE(jvm.ready());
    auto dumped = run_command({heapctl_binary(), "--socket", d.socket(), "dump", std::to_string(jvm.pid()), "--wait"});
    EXPECT_EQ(dumped.exit_code, 0) << dumped.err << d.log();
    EXPECT_NE(dumped.out.find("Sessions (static LEAK)"), std::string::npos) << dumped.out;

    // The dump the JVM wrote in its /tmp was copied out and removed there.
    const std::string jvm_tmp = "/proc/" + std::to_string(jvm.pid()) + "/root/tmp";
    const std::string staged = "heapd-dump-" + std::to_string(jvm.ns_pid()) + "-";  // this JVM's, not other tests'
    for (const auto& e : std::filesystem::directory_iterator(jvm_tmp))
        EXPECT_FALSE(e.path().filename().string().starts_with(staged)) << e.path() << " left in the JVM's /tmp";
    // The stored dump belongs to root and the store's group.
    bool stored = false;
    for (const auto& e : std::filesystem::recursive_directory_iterator(d.store() + "/entries")) {
        if (e.path().filename() != "dump.hprof") continue;
        struct stat st {};
        ASSERT_EQ(::stat(e.path().c_str(), &st), 0);
        EXPECT_EQ(st.st_uid, 0u);
        EXPECT_EQ(st.st_gid, user.gid());
        stored = true;
    }
    EXPECT_TRUE(stored);
}

TEST(service_hardening, the_units_capabilities_dump_another_users_jvm_in_a_container) {
    dumps_another_users_jvm(false, true);
}

TEST(service_hardening, with_a_read_only_system_it_dumps_another_users_jvm_on_the_host) {
    dumps_another_users_jvm(true, false);
}

TEST(service_hardening, with_a_read_only_system_it_dumps_another_users_jvm_in_a_container) {
    dumps_another_users_jvm(true, true);
}

}  // namespace
}  // namespace heapd::test
