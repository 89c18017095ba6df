#include "tests/support/isolated_jvm.h"

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace heapd::test {
namespace {

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
    std::vector<char*> out;
    for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
    out.push_back(nullptr);
    return out;
}

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

} // namespace

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
        std::string script = "mount -t tmpfs -o mode=1777 tmpfs /tmp && exec";
        for (const auto& a : java) script += " " + shell_quote(a);
        argv = {"unshare", "--mount", "--pid", "--fork", "--mount-proc", "--propagation", "private", "sh", "-c", script};
    }
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return;
    launcher_ = ::fork();
    if (launcher_ == 0) {
        ::dup2(out[1], 1);
        if (!how.workdir.empty() && ::chdir(how.workdir.c_str()) != 0) ::_exit(126);
        auto a = c_argv(argv);
        ::execvp(a[0], a.data());
        ::_exit(127);
    }
    ::close(out[1]);
    std::string seen;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    char buf[4096];
    while (seen.find("ready") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
        pollfd p{out[0], POLLIN, 0};
        if (::poll(&p, 1, 1000) <= 0) continue;
        ssize_t n = ::read(out[0], buf, sizeof buf);
        if (n <= 0) break;
        seen.append(buf, static_cast<std::size_t>(n));
    }
    ::close(out[0]);
    jvm_pid_ = how.container ? first_child(launcher_) : launcher_;
    auto pids = jvm_pid_ > 0 ? ns_pids(jvm_pid_) : std::vector<pid_t>{};
    ns_pid_ = pids.empty() ? -1 : pids.back();
    ready_ = seen.find("ready") != std::string::npos && jvm_pid_ > 0;
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

} // namespace heapd::test
