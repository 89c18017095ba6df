#pragma once
// Helpers of the attach tests: trigger files left anywhere a JVM could look, the time a call takes,
// and the children of a process (an -XX:OnOutOfMemoryError command).
#include <dirent.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

namespace heapd::test {

// The JVM's trigger files (`.attach_pid<its ns pid>`) in its working directory, its /tmp, our /tmp
// and our working directory (other tests' JVMs, running meanwhile, have other names).
inline std::vector<std::string> trigger_files(pid_t jvm) {
    std::vector<std::string> found;
    std::string proc = "/proc/" + std::to_string(jvm);
    pid_t ns_pid = jvm;
    std::ifstream status(proc + "/status");
    for (std::string line; std::getline(status, line);)
        if (line.starts_with("NSpid:")) ns_pid = std::stoi(line.substr(line.find_last_of(" \t") + 1));
    const std::string name = ".attach_pid" + std::to_string(ns_pid);
    char cwd[4096] = ".";
    if (::getcwd(cwd, sizeof cwd) == nullptr) cwd[0] = '.', cwd[1] = '\0';
    for (std::string dir : {proc + "/cwd", proc + "/root/tmp", std::string("/tmp"), std::string(cwd)})
        if (::access((dir + "/" + name).c_str(), F_OK) == 0) found.push_back(dir + "/" + name);
    return found;
}

// Seconds since a start.
struct stopwatch {
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); }
};

// The direct children of every thread of pid.
inline std::vector<pid_t> children_of(pid_t pid) {
    std::vector<pid_t> out;
    std::string tasks = "/proc/" + std::to_string(pid) + "/task";
    DIR* d = ::opendir(tasks.c_str());
    if (d == nullptr) return out;
    while (dirent* e = ::readdir(d)) {
        if (e->d_name[0] == '.') continue;
        std::ifstream in(tasks + "/" + e->d_name + "/children");
        for (pid_t child; in >> child;) out.push_back(child);
    }
    ::closedir(d);
    return out;
}

// Kills (SIGKILL) the whole tree of processes below pid, deepest first.
inline void kill_descendants(pid_t pid) {
    for (pid_t child : children_of(pid)) {
        kill_descendants(child);
        ::kill(child, SIGKILL);
    }
}

}  // namespace heapd::test
