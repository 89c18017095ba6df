#include "support/isolated_jvm.h"

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace heapd::test {
namespace {

// The first child of pid (from /proc/PID/task/PID/children), or -1.
pid_t first_child(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
    pid_t child = -1;
    in >> child;
    return in ? child : -1;
}

std::string shell_quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

}  // namespace

temp_user::temp_user() {
    static int counter = 0;
    name_ = "heapdt" + std::to_string(::getpid() % 100000) + "x" + std::to_string(counter++);
    auto r = run_command({"useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name_});
    if (r.exit_code != 0) return;
    if (passwd* pw = ::getpwnam(name_.c_str())) {
        uid_ = pw->pw_uid;
        gid_ = pw->pw_gid;
    }
}

temp_user::~temp_user() {
    if (name_.empty()) return;
    run_command({"pkill", "-KILL", "-u", name_});
    run_command({"userdel", name_});
    // The user's JVMs leave their hsperfdata directory behind.
    std::error_code ignored;
    std::filesystem::remove_all("/tmp/hsperfdata_" + name_, ignored);
}

std::vector<pid_t> ns_pids(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(in, line);) {
        if (!line.starts_with("NSpid:")) continue;
        std::istringstream fields(line.substr(6));
        std::vector<pid_t> out;
        for (pid_t p; fields >> p;) out.push_back(p);
        return out;
    }
    return {};
}

isolated_jvm::isolated_jvm(const java_main& main_class, const std::vector<std::string>& jvm_flags,
                           const std::vector<std::string>& args, const isolation& how) {
    std::vector<std::string> java = {"java"};
    java.insert(java.end(), jvm_flags.begin(), jvm_flags.end());
    java.insert(java.end(), {"-cp", test_classes_dir(), main_class.name});
    java.insert(java.end(), args.begin(), args.end());
    if (how.user != nullptr)
        java.insert(java.begin(), {"setpriv", "--reuid=" + std::to_string(how.user->uid()),
                                   "--regid=" + std::to_string(how.user->gid()), "--clear-groups"});
    std::vector<std::string> argv = java;
    if (how.container) {
        // The build (heapd, the test classes) stays visible when the tree itself is under /tmp.
        std::vector<std::string> shared = how.shared;
        const std::string source = HEAPD_SOURCE_DIR, binary = HEAPD_BINARY_DIR;
        if (source.starts_with("/tmp/")) shared.push_back(source);
        if (binary.starts_with("/tmp/") && !binary.starts_with(source + "/")) shared.push_back(binary);
        // Each shared directory is held open (descriptors 3 to 9, all the shell can name) while the
        // tmpfs covers /tmp, then bound back at its path.
        if (shared.size() > 7) throw std::invalid_argument("isolated_jvm: at most 7 shared directories");
        std::string script, bind;
        for (std::size_t i = 0; i < shared.size(); ++i) {
            const std::string fd = std::to_string(3 + i), dir = shell_quote(shared[i]);
            script += "exec " + fd + "<" + dir + " && ";
            bind += "mkdir -p " + dir + " && mount --no-canonicalize --bind /proc/self/fd/" + fd + " " + dir +
                    " && exec " + fd + "<&- && ";
        }
        const std::string size = how.tmp_size.empty() ? "" : ",size=" + how.tmp_size;
        script += "mount -t tmpfs -o mode=1777" + size + " tmpfs /tmp && " + bind;
        if (how.own_jdk) {
            script +=
                "jdk=$(dirname \"$(dirname \"$(readlink -f \"$(command -v java)\")\")\") && mkdir /tmp/jdk && "
                "mount --bind \"$jdk\" /tmp/jdk && ";
            *std::find(java.begin(), java.end(), "java") = "/tmp/jdk/bin/java";
        }
        script += "exec";
        for (const auto& a : java) script += " " + shell_quote(a);
        argv = {"unshare",       "--mount", "--pid", "--fork", "--mount-proc",
                "--propagation", "private", "sh",    "-c",     script};
    }
    auto started = start_until_ready(argv, how.workdir);
    launcher_ = started.pid;
    jvm_pid_ = how.container ? first_child(launcher_) : launcher_;
    auto pids = jvm_pid_ > 0 ? ns_pids(jvm_pid_) : std::vector<pid_t>{};
    ns_pid_ = pids.empty() ? -1 : pids.back();
    ready_ = started.ready && jvm_pid_ > 0;
}

isolated_jvm::~isolated_jvm() {
    if (launcher_ <= 0) return;
    // SIGTERM lets the JVM remove its hsperfdata file; killing a container's first process ends
    // every process of its pid namespace.
    if (jvm_pid_ > 0) ::kill(jvm_pid_, SIGTERM);
    for (int i = 0; i < 100; ++i) {
        if (::waitpid(launcher_, nullptr, WNOHANG) == launcher_) return;
        ::usleep(100000);
    }
    if (jvm_pid_ > 0) ::kill(jvm_pid_, SIGKILL);
    ::kill(launcher_, SIGKILL);
    ::waitpid(launcher_, nullptr, 0);
}

}  // namespace heapd::test
