#pragma once
// A cgroup v1 made by a test under one controller's hierarchy (memory or pids), with a name of its
// own; processes moved into it are killed and the cgroup removed on destruction, also when the test
// fails halfway. And a guard for a forked child.
#include <sys/types.h>

#include <string>
#include <utility>

namespace heapd::test {

// One cgroup of /sys/fs/cgroup/<controller>/heapd-test-<pid>-<n>.
class test_cgroup {
public:
    // Creates it (ok() false when the controller's hierarchy is not mounted or refuses).
    explicit test_cgroup(const std::string& controller);
    ~test_cgroup();
    test_cgroup(const test_cgroup&) = delete;
    test_cgroup& operator=(const test_cgroup&) = delete;

    bool ok() const { return !dir_.empty(); }
    // The cgroup's path from the hierarchy's root ("/heapd-test-12-1"), as /proc/PID/cgroup names it.
    const std::string& path() const { return path_; }
    const std::string& dir() const { return dir_; }
    // Writes value into one of its files ("memory.limit_in_bytes"); false when refused.
    bool set(const std::string& file, const std::string& value) const;
    // Moves a process (all its threads) in; for memory, with the charges it already has.
    bool add(pid_t pid) const;

private:
    std::string controller_, dir_, path_;
};

// A forked child killed (SIGKILL) and reaped on destruction unless released first: so that a test
// that fails halfway leaves no process behind, in a cgroup or out of it.
class child_reaper {
public:
    explicit child_reaper(pid_t pid) : pid_(pid) {}
    ~child_reaper();
    child_reaper(const child_reaper&) = delete;
    child_reaper& operator=(const child_reaper&) = delete;
    // The pid, no longer killed here (the caller reaps it).
    pid_t release() { return std::exchange(pid_, -1); }

private:
    pid_t pid_;
};

}  // namespace heapd::test
