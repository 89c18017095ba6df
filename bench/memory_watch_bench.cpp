// What watching a JVM's memory costs heapd per JVM and per poll: the glance every listing, metric
// and poll takes (VmRSS and the cgroup's files), the breakdown from /proc alone (smaps, each thread's
// stack pointer, hsperfdata), and the breakdown with the JVM asked through attach (GC.heap_info,
// Compiler.codecache, VM.native_memory: forked attach children). Prints, for each mode, the CPU time
// of this process and of its children per JVM per poll, and the wall time of one poll of all JVMs.
//
//   memory_watch_bench [--polls N] [--mode glance|proc|attach|all] PID...
//
// Run it under `strace -f -c` to count the system calls of one mode (bench/run_memory_watch_bench.sh).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "daemon/jvms/memory_probe.h"

namespace {

double cpu_seconds(int who) {
    rusage u{};
    ::getrusage(who, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// Polls every JVM `polls` times in one mode; false when a JVM could not be read.
bool run(const std::string& mode, const std::vector<pid_t>& pids, int polls) {
    const double self0 = cpu_seconds(RUSAGE_SELF), children0 = cpu_seconds(RUSAGE_CHILDREN);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < polls; ++i)
        for (const pid_t pid : pids) {
            bool ok = true;
            if (mode == "glance") {
                ok = heapd::daemon::glance_memory(pid).has_value();
            } else {
                heapd::daemon::memory_probe_options o;
                o.attach = mode == "attach";
                ok = heapd::daemon::probe_memory(pid, o).has_value();
            }
            if (!ok) {
                std::fprintf(stderr, "memory_watch_bench: pid %d could not be read (%s)\n", pid, mode.c_str());
                return false;
            }
        }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double self = cpu_seconds(RUSAGE_SELF) - self0, children = cpu_seconds(RUSAGE_CHILDREN) - children0;
    const double per = 1e3 / (static_cast<double>(polls) * static_cast<double>(pids.size()));
    std::printf(
        "%-7s %4zu JVMs  %4d polls  per JVM per poll: %8.3f ms CPU in heapd, %8.3f ms in its children;"
        "  one poll of all: %8.1f ms wall\n",
        mode.c_str(), pids.size(), polls, self * per, children * per, wall * 1e3 / polls);
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    int polls = 20;
    std::string mode = "all";
    std::vector<pid_t> pids;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--polls") == 0 && i + 1 < argc)
            polls = std::atoi(argv[++i]);
        else if (std::strcmp(argv[i], "--mode") == 0 && i + 1 < argc)
            mode = argv[++i];
        else
            pids.push_back(static_cast<pid_t>(std::atoi(argv[i])));
    }
    if (pids.empty() || polls <= 0) {
        std::fprintf(stderr, "usage: memory_watch_bench [--polls N] [--mode glance|proc|attach|all] PID...\n");
        return 2;
    }
    for (const char* m : {"glance", "proc", "attach"})
        if ((mode == "all" || mode == m) && !run(m, pids, polls)) return 1;
    return 0;
}
