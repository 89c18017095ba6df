#include "support/process_state.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/jvm_process.h"

namespace heapd::test {
namespace {

std::string task_file(pid_t pid, pid_t tid, const char* name) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/" + name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string java_home() {
    if (const char* home = std::getenv("JAVA_HOME"); home != nullptr && *home != '\0') return home;
    std::error_code ec;
    auto javac = std::filesystem::canonical("/usr/bin/javac", ec);
    return ec ? "/usr/lib/jvm/default-java" : javac.parent_path().parent_path().string();
}

}  // namespace

std::vector<pid_t> task_ids(pid_t pid) {
    std::vector<pid_t> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec))
        out.push_back(static_cast<pid_t>(std::stol(e.path().filename().string())));
    std::sort(out.begin(), out.end());
    return out;
}

char task_state(pid_t pid, pid_t tid) {
    std::string stat = task_file(pid, tid, "stat");
    auto close = stat.rfind(')');
    return close == std::string::npos || close + 2 >= stat.size() ? '\0' : stat[close + 2];
}

std::string task_name(pid_t pid, pid_t tid) {
    std::string comm = task_file(pid, tid, "comm");
    if (!comm.empty() && comm.back() == '\n') comm.pop_back();
    return comm;
}

bool untraced(pid_t pid) {
    for (pid_t tid : task_ids(pid)) {
        std::istringstream status(task_file(pid, tid, "status"));
        for (std::string line; std::getline(status, line);)
            if (line.starts_with("TracerPid:") && std::stol(line.substr(10)) != 0) return false;
    }
    return true;
}

bool wait_for_states(pid_t pid, char state, bool want) {
    for (int i = 0; i < 1000; ++i) {
        auto tids = task_ids(pid);
        bool all = !tids.empty();
        for (pid_t tid : tids) {
            char s = task_state(pid, tid);
            if (s != '\0' && (s == state) != want) all = false;
        }
        if (all) return true;
        ::usleep(10000);
    }
    return false;
}

stopped_process::stopped_process(pid_t pid) : pid_(pid) {
    if (pid_ <= 0 || ::kill(pid_, SIGSTOP) != 0) return;
    stopped_ = wait_for_states(pid_, 'T');
}

void stopped_process::resume() {
    if (resumed_ || pid_ <= 0) return;
    resumed_ = true;
    ::kill(pid_, SIGCONT);
}

std::string build_native_spin_library(const std::string& dir, std::string& error) {
    std::string home = java_home();
    std::string out = dir + "/libnative_spin.so";
    auto r =
        run_command({"gcc", "-shared", "-fPIC", "-O0", "-g", "-I" + home + "/include", "-I" + home + "/include/linux",
                     "-o", out, std::string(HEAPD_SOURCE_DIR) + "/tests/java/native_spin.c"});
    if (r.exit_code != 0) {
        error = r.err;
        return {};
    }
    return out;
}

}  // namespace heapd::test
