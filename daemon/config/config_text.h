#pragma once
// A configuration in words: the summary `heapd check-config` prints, and what a reload changed.
#include <string>
#include <vector>

#include "daemon/config/config.h"

namespace heapd::daemon {

// Which JVMs a rule applies to: "every JVM", or "main class com.example.*, command /-Xmx8g/, user app".
std::string describe_selector(const jvm_selector& s);
// Which JVMs are armed for their OutOfMemoryError: "arming every JVM, looked for every 2s, ...".
std::string describe_arming(const oom_options& o);
// When a rule dumps: "every 6h; old gen above 80% after 3 old collections in a row".
std::string describe_triggers(const dump_rule& r);
// How often at most: "cooldown 1h, at most 3 dumps per JVM, live objects only".
std::string describe_limits(const dump_rule& r);

// The summary of a valid configuration, one line each (indented lines belong to the rule above).
std::vector<std::string> config_summary(const heapd_config& c);

// What differs between the running configuration and one read again.
struct config_changes {
    std::vector<std::string> live;          // taken at once: "retention.keep_count 50 -> 1"
    std::vector<std::string> need_restart;  // socket, store, spool, group, workers: "daemon.workers 1 -> 2"
    bool empty() const { return live.empty() && need_restart.empty(); }
};

config_changes compare_configs(const heapd_config& running, const heapd_config& next);

}  // namespace heapd::daemon
