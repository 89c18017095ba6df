// systemd/: `cmake --install` puts binaries, units, tmpfiles.d and sysusers.d where a package
// does; `systemd-analyze verify` finds nothing to say about the installed units (and does about a
// broken copy); the offline security analysis sees the hardening and the capability set; sysusers
// and tmpfiles, run against a scratch root, make the group and the directories heapd expects.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "daemon/config/config.h"
#include "support/jvm_process.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

namespace fs = std::filesystem;

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// A prefix holding what `cmake --install` put there.
class installed {
public:
    installed() { result_ = run_command({HEAPD_CMAKE, "--install", HEAPD_BINARY_DIR, "--prefix", dir_.file("usr")}); }
    const command_result& result() const { return result_; }
    std::string prefix() const { return dir_.file("usr"); }
    std::string unit(const std::string& name) const { return prefix() + "/lib/systemd/system/" + name; }
    std::string root() const { return dir_.file("root"); }

private:
    shared_dir dir_;
    command_result result_;
};

std::set<std::string> files_under(const std::string& dir) {
    std::set<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (!e.is_directory()) out.insert(fs::relative(e.path(), dir).string());
    return out;
}

command_result verify(const std::vector<std::string>& units) {
    std::vector<std::string> argv = {"systemd-analyze", "verify", "--man=no"};
    argv.insert(argv.end(), units.begin(), units.end());
    return run_command(argv);
}

TEST(systemd_units, install_puts_binaries_units_and_system_files_where_a_package_does) {
    installed i;
    ASSERT_EQ(i.result().exit_code, 0) << i.result().out << i.result().err;
    const auto files = files_under(i.prefix());
    for (const char* expected :
         {"bin/heapd", "bin/heapctl", "lib/systemd/system/heapd.service", "lib/systemd/system/heapd.socket",
          "lib/systemd/system/heapd-upload.service", "lib/tmpfiles.d/heapd.conf", "lib/sysusers.d/heapd.conf"})
        EXPECT_TRUE(files.count(expected)) << expected << " not installed; got:\n" << i.result().out;
    EXPECT_EQ(::access((i.prefix() + "/bin/heapd").c_str(), X_OK), 0);
    EXPECT_EQ(::access((i.prefix() + "/bin/heapctl").c_str(), X_OK), 0);
    // The service runs the installed heapd, in the foreground (Type=notify: no fork).
    const std::string service = read_text(i.unit("heapd.service"));
    EXPECT_NE(service.find("\nExecStart=" + i.prefix() + "/bin/heapd serve --foreground\n"), std::string::npos)
        << service;
    EXPECT_EQ(service.find("@HEAPD_"), std::string::npos) << "a placeholder left in heapd.service";
    const std::string upload = read_text(i.unit("heapd-upload.service"));
    EXPECT_NE(upload.find("\nExecStart=" + i.prefix() + "/bin/heapd upload\n"), std::string::npos) << upload;
    EXPECT_EQ(upload.find("@HEAPD_"), std::string::npos) << "a placeholder left in heapd-upload.service";
}

TEST(systemd_units, verify_finds_nothing_to_say_about_the_installed_units) {
    installed i;
    ASSERT_EQ(i.result().exit_code, 0) << i.result().err;
    auto r = verify({i.unit("heapd.socket"), i.unit("heapd.service"), i.unit("heapd-upload.service")});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    // An unknown setting or a value it cannot parse is only a warning: there must be none.
    EXPECT_EQ(r.out + r.err, "");
}

TEST(systemd_units, verify_catches_a_mistake_in_a_unit) {
    installed i;
    ASSERT_EQ(i.result().exit_code, 0) << i.result().err;
    const std::string original = read_text(i.unit("heapd.service"));
    struct mistake {
        std::string from, to, reported;
    };
    for (const mistake& m : {mistake{"NoNewPrivileges=yes", "NoNewPrivilege=yes", "Unknown key"},
                             mistake{"Type=notify", "Type=notifyy", "Failed to parse service type"},
                             mistake{"/bin/heapd serve", "/bin/heapd-missing serve", "is not executable"}}) {
        std::string broken = original;
        auto at = broken.find(m.from);
        ASSERT_NE(at, std::string::npos) << m.from;
        broken.replace(at, m.from.size(), m.to);
        std::ofstream(i.unit("heapd.service")) << broken;
        auto r = verify({i.unit("heapd.socket"), i.unit("heapd.service")});
        EXPECT_NE(r.out + r.err, "") << m.to;
        EXPECT_NE((r.out + r.err).find(m.reported), std::string::npos) << r.out << r.err;
    }
}

TEST(systemd_units, the_service_is_hardened_and_keeps_only_the_capabilities_attach_needs) {
    installed i;
    ASSERT_EQ(i.result().exit_code, 0) << i.result().err;
    auto r = run_command({"systemd-analyze", "security", "--offline=yes", "--json=short", i.unit("heapd.service")});
    auto checks = wire::json::parse(r.out, nullptr, false);
    ASSERT_TRUE(checks.is_array()) << r.out << r.err;
    std::map<std::string, wire::json> set;  // name -> whether the restriction is in force
    for (const auto& c : checks) set[c["name"].get<std::string>()] = c["set"];
    auto restricted = [&](const std::string& name) {
        EXPECT_TRUE(set.count(name)) << name;
        return set[name] == true;
    };
    for (const char* on : {"NoNewPrivileges=",
                           "ProtectSystem=",
                           "NotifyAccess=",
                           "ProtectKernelModules=",
                           "ProtectControlGroups=",
                           "CapabilityBoundingSet=~CAP_SYS_MODULE",
                           "CapabilityBoundingSet=~CAP_SYS_RAWIO",
                           "CapabilityBoundingSet=~CAP_NET_ADMIN",
                           "CapabilityBoundingSet=~CAP_SYS_TIME",
                           "CapabilityBoundingSet=~CAP_MKNOD",
                           "CapabilityBoundingSet=~CAP_BPF",
                           "CapabilityBoundingSet=~CAP_SYS_BOOT",
                           "CapabilityBoundingSet=~CAP_(CHOWN|FSETID|SETFCAP)",
                           "PrivateNetwork=",
                           "IPAddressDeny=",
                           "RestrictAddressFamilies=~AF_(INET|INET6)",
                           "RestrictAddressFamilies=~AF_NETLINK",
                           "ProtectKernelTunables=",
                           "ProtectHostname=",
                           "PrivateDevices=",
                           "PrivateMounts=",
                           "ProcSubset=",
                           "SystemCallFilter=~@module",
                           "SystemCallFilter=~@reboot",
                           "RestrictNamespaces=~user",
                           "RestrictNamespaces=~net",
                           "RestrictNamespaces=~uts",
                           "RestrictNamespaces=~ipc",
                           "RestrictNamespaces=~cgroup",
                           "UMask="})
        EXPECT_TRUE(restricted(on)) << on;
    // What attach, ptrace and setns need stays; and the JVMs' /tmp is the real one. And what the
    // snapshot fallback needs: jhsdb is a JVM (writable code), run in a pid namespace of its own
    // with its own /proc (booted_package_test.sh dumps JVMs with attach disabled under this unit).
    for (const char* off :
         {"PrivateTmp=", "CapabilityBoundingSet=~CAP_SYS_PTRACE", "CapabilityBoundingSet=~CAP_SYS_ADMIN",
          "CapabilityBoundingSet=~CAP_KILL", "CapabilityBoundingSet=~CAP_SYS_CHROOT",
          "CapabilityBoundingSet=~CAP_SET(UID|GID|PCAP)", "CapabilityBoundingSet=~CAP_(DAC_*|FOWNER|IPC_OWNER)",
          "RestrictNamespaces=~mnt", "RestrictNamespaces=~pid", "MemoryDenyWriteExecute=", "SystemCallFilter=~@mount",
          "SystemCallFilter=~@privileged", "SystemCallFilter=~@debug", "ProtectProc="})
        EXPECT_FALSE(restricted(off)) << off;
    // The exposure systemd gives it (6.7 before this hardening; every point left is explained in the unit).
    auto text = run_command({"systemd-analyze", "security", "--offline=yes", i.unit("heapd.service")});
    const std::string marker = "Overall exposure level for heapd.service: ";
    const auto at = text.out.find(marker);
    ASSERT_NE(at, std::string::npos) << text.out << text.err;
    const double exposure = std::stod(text.out.substr(at + marker.size()));
    std::cout << "systemd-analyze security: heapd.service exposure " << exposure << "\n";
    EXPECT_LT(exposure, 4.0);
}

TEST(systemd_units, the_units_and_tmpfiles_agree_with_the_daemons_defaults) {
    installed i;
    ASSERT_EQ(i.result().exit_code, 0) << i.result().err;
    const daemon::serve_options defaults;
    const std::string socket_unit = read_text(i.unit("heapd.socket")), service = read_text(i.unit("heapd.service"));
    const std::string tmpfiles = read_text(i.prefix() + "/lib/tmpfiles.d/heapd.conf");
    EXPECT_NE(socket_unit.find("\nListenStream=" + defaults.socket_path + "\n"), std::string::npos);
    EXPECT_NE(socket_unit.find("\nSocketMode=0666\n"), std::string::npos);
    const std::string run_dir = fs::path(defaults.socket_path).parent_path().string();
    EXPECT_NE(service.find("\nReadWritePaths=" + defaults.store_dir + " " + run_dir + " " + defaults.spool_dir + "\n"),
              std::string::npos)
        << service;
    for (const std::string& dir : {run_dir, defaults.store_dir, defaults.spool_dir})
        EXPECT_NE(tmpfiles.find("\nd " + dir + " "), std::string::npos) << dir;
    EXPECT_EQ(defaults.group, "heapd");
}

TEST(systemd_units, sysusers_and_tmpfiles_make_the_group_and_directories_in_a_root) {
    installed i;
    ASSERT_EQ(i.result().exit_code, 0) << i.result().err;
    fs::create_directories(i.root() + "/etc");
    auto users = run_command({"systemd-sysusers", "--root=" + i.root(), i.prefix() + "/lib/sysusers.d/heapd.conf"});
    ASSERT_EQ(users.exit_code, 0) << users.err;
    // The group made in the root's /etc/group.
    gid_t heapd_gid = static_cast<gid_t>(-1);
    std::ifstream groups(i.root() + "/etc/group");
    for (std::string line; std::getline(groups, line);)
        if (line.starts_with("heapd:")) heapd_gid = static_cast<gid_t>(std::stoul(line.substr(line.find(':', 6) + 1)));
    ASSERT_NE(heapd_gid, static_cast<gid_t>(-1)) << read_text(i.root() + "/etc/group");

    auto tmp =
        run_command({"systemd-tmpfiles", "--root=" + i.root(), "--create", i.prefix() + "/lib/tmpfiles.d/heapd.conf"});
    ASSERT_EQ(tmp.exit_code, 0) << tmp.err;
    struct expected {
        std::string dir;
        mode_t mode;
        gid_t gid;
    };
    for (const expected& e : {expected{"/run/heapd", 0755, 0}, expected{"/var/lib/heapd", 0750, heapd_gid},
                              expected{"/var/spool/heapd", 01733, 0}}) {
        struct stat st {};
        ASSERT_EQ(::lstat((i.root() + e.dir).c_str(), &st), 0) << e.dir;
        EXPECT_TRUE(S_ISDIR(st.st_mode)) << e.dir;
        EXPECT_EQ(st.st_mode & 07777, e.mode) << e.dir;
        EXPECT_EQ(st.st_uid, 0u) << e.dir;
        EXPECT_EQ(st.st_gid, e.gid) << e.dir;
    }
}

}  // namespace
}  // namespace heapd::test
