#include "support/test_cgroup.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>

namespace heapd::test {

test_cgroup::test_cgroup(const std::string& controller) : controller_(controller) {
    static std::atomic<int> serial{0};
    const std::string root = "/sys/fs/cgroup/" + controller;
    const std::string name = "heapd-test-" + std::to_string(::getpid()) + "-" + std::to_string(++serial);
    if (::access((root + "/cgroup.procs").c_str(), W_OK) != 0 || ::mkdir((root + "/" + name).c_str(), 0755) != 0)
        return;
    dir_ = root + "/" + name;
    path_ = "/" + name;
}

test_cgroup::~test_cgroup() {
    if (dir_.empty()) return;
    // Every process left in it is killed; the directory goes once it is empty.
    for (int attempt = 0; attempt < 100; ++attempt) {
        std::ifstream procs(dir_ + "/cgroup.procs");
        bool any = false;
        for (pid_t pid; procs >> pid;) {
            any = true;
            ::kill(pid, SIGKILL);
        }
        if (!any && ::rmdir(dir_.c_str()) == 0) return;
        ::usleep(50000);
    }
}

child_reaper::~child_reaper() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
}

bool test_cgroup::set(const std::string& file, const std::string& value) const {
    std::ofstream out(dir_ + "/" + file);
    out << value;
    out.flush();
    return static_cast<bool>(out);
}

bool test_cgroup::add(pid_t pid) const {
    if (controller_ == "memory") set("memory.move_charge_at_immigrate", "3");
    return set("cgroup.procs", std::to_string(pid));
}

}  // namespace heapd::test
