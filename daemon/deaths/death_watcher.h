#pragma once
// The daemon's watch over every JVM of the host and its containers until it dies, on a thread of
// its own. Every poll interval the JVMs are found (/proc and hsperfdata, no attach); each new one
// gets a pidfd, and each watched one a glance at its resident memory and limit (and a breakdown
// from /proc when it has grown since the last). Between polls the thread waits in poll(2) on the
// pidfds, so a death is seen at once: its exit status (process_exit.h), its memory cgroup's OOM
// kill count before and after, and what was last seen of its memory make a death_record, handed to
// the caller (which keeps it in the store, logs it and counts it).
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include <spdlog/logger.h>

#include "base/unique_fd.h"
#include "daemon/deaths/death_record.h"

namespace heapd::daemon {

// How many JVMs one daemon watches at most (a descriptor each) when its limit of open files is
// `open_files`: a quarter of it, at most 1024; of them, one user other than root at most a quarter.
// The server leaves these descriptors out of what connections may take.
std::size_t max_watched_jvms(std::uint64_t open_files);

// Watches the JVMs for their end.
class death_watcher {
public:
    // Called on the watcher's thread for each death, the record complete but for `kept`.
    using death_handler = std::function<void(death_record)>;
    // host: the host's name, for the records. max_jvms: max_watched_jvms; max_per_user: of them, what
    // one user other than root may have (a quarter by default).
    death_watcher(std::shared_ptr<spdlog::logger> log, std::string host, std::size_t max_jvms, death_handler handler,
                  std::size_t max_per_user = 0);
    ~death_watcher();  // stops the thread
    death_watcher(const death_watcher&) = delete;
    death_watcher& operator=(const death_watcher&) = delete;

    // The poll interval (at start and at each reload); the first call starts the watching.
    void configure(std::chrono::milliseconds poll_interval);
    // JVMs watched now, and polls done so far.
    std::uint64_t watched() const { return watched_.load(); }
    std::uint64_t polls() const { return polls_.load(); }

private:
    struct watched_jvm;
    void run();
    void poll_jvms();
    void record_death(watched_jvm& w);

    std::shared_ptr<spdlog::logger> log_;
    const std::string host_;
    const std::size_t max_jvms_, max_per_user_;
    death_handler handler_;
    unique_fd wake_;  // an eventfd: configure() and the destructor wake the thread through it
    std::mutex mutex_;
    std::chrono::milliseconds interval_{0};  // 0: not configured yet
    bool stopping_ = false;
    std::atomic<std::uint64_t> watched_{0}, polls_{0};
    std::vector<std::unique_ptr<watched_jvm>> jvms_;  // the thread's own
    bool warned_full_ = false;
    std::set<uid_t> warned_users_;  // users told they have as many JVMs watched as one may
    std::thread thread_;
};

}  // namespace heapd::daemon
