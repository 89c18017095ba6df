#pragma once
// The daemon's arming of JVMs ahead of their OutOfMemoryError (arm_jvm.h), on a thread of its
// own: every poll interval the JVMs are found (/proc and hsperfdata, no attach); each new one the
// options select (every JVM by default, or those whose OnOutOfMemoryError runs heapd) is armed
// through attach; the armed ones are checked again every recheck interval, through a listener
// already up only (never signalled), and armed again when their flags were changed. A JVM in its
// hook is never touched. For a JVM without heapd's hook, the directory its dump goes to is watched
// before its flags are set (dump_collector.h), and the daemon collects the dump itself.
// `jvms` and the metrics read the states; one log line per JVM armed or not armable.
#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/logger.h>

#include "daemon/config/config.h"
#include "daemon/jvms/jvm_identity.h"
#include "daemon/oom/arm_jvm.h"
#include "daemon/oom/dump_collector.h"

namespace heapd::daemon {

// Arms the JVMs of the host and its containers, in the background.
class oom_armer {
public:
    // socket_path: this daemon's; a JVM whose hook names another socket is left to its daemon. key:
    // the store's, the dump names are tagged with (arm_jvm.h). collector: where the dumps of JVMs
    // without heapd's hook are collected (it outlives the armer; none: such JVMs are not armed).
    oom_armer(std::shared_ptr<spdlog::logger> log, std::string socket_path, const hash_key& key,
              dump_collector* collector);
    ~oom_armer();  // stops the thread (an attach under way ends within its timeout)
    oom_armer(const oom_armer&) = delete;
    oom_armer& operator=(const oom_armer&) = delete;

    // New settings (at start and at each reload), from any thread; the next poll runs at once.
    void configure(const oom_options& options);
    // What arming found for the JVM, when it is one arming is for and has been looked at.
    std::optional<arm_status> status_of(const jvm_identity& jvm) const;
    // How many JVMs (of those arming is for) are in each state now.
    struct counts {
        std::uint64_t armed = 0, own_path = 0, not_armed = 0;
    };
    counts count() const;
    // Polls done so far.
    std::uint64_t polls() const;

private:
    // One JVM's state.
    struct entry {
        arm_status status;
        std::chrono::steady_clock::time_point checked;
    };
    void run();
    void poll_once(const oom_options& options);
    // Has the collector watch where the JVM's dump goes (target.dump_path); the reason it cannot.
    std::optional<std::string> collect(const collect_target& target);

    std::shared_ptr<spdlog::logger> log_;
    const std::string socket_path_;
    const hash_key key_;
    dump_collector* const collector_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    oom_options options_;
    bool configured_ = false;
    bool stopping_ = false;
    std::uint64_t generation_ = 0;  // of the settings: a change wakes the thread for a poll at once
    std::uint64_t polls_ = 0;
    std::map<jvm_identity, entry> jvms_;
    std::set<jvm_identity> elsewhere_;  // JVMs whose hook, read through attach, names another daemon
    std::thread thread_;
};

}  // namespace heapd::daemon
