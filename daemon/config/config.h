#pragma once
// The daemon's configuration: how it serves (socket, store, workers, retention), where it writes
// metrics, and the rules that decide when a JVM is dumped without a person asking. Read from
// /etc/heapd/heapd.toml (config_file.h); flags of `heapd serve` override the file.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "daemon/store/free_space.h"
#include "daemon/store/store_retention.h"
#include "formats/wire/protocol.h"

namespace heapd::daemon {

// How to serve: where, with how many workers, who is admin, what to keep.
struct serve_options {
    std::string socket_path = wire::standard_socket_path;
    std::string store_dir = "/var/lib/heapd";
    unsigned workers = 1;
    bool foreground = false;
    std::string spool_dir = "/var/spool/heapd";  // dump requests spooled by OOM hooks; "" for none
    std::string group = "heapd";                 // members may act on everything; stored files belong to it
    retention_policy retention;
    std::size_t max_connections = 256;
    std::size_t max_connections_per_user = 32;      // of one uid outside the heapd group (root's are not counted)
    std::chrono::milliseconds idle_timeout{60000};  // a connection with nothing to do is closed after this
    std::uint64_t analysis_memory =
        0;  // an analysis process's memory beyond heapd and the dump; 0: no limit of its own
    std::chrono::milliseconds shutdown_grace{10000};
    disk_reserve reserve;  // left free on the store's disk by dumps copied in and analyses' spills
    // heapd's allocation-sampling agent, for sites requests and sampling rules; "" for the one beside
    // heapd, else where it is installed (attach/agent_control.h's find_agent_library).
    std::string agent_library;
};

// Which JVMs a rule applies to: every condition given must hold (none given: every JVM).
struct jvm_selector {
    std::string main_class;                // glob (fnmatch) on the main class or jar, as `jps -l` shows it
    std::string command;                   // ECMAScript regex searched in the command line and JVM arguments
    std::optional<std::regex> command_re;  // command, compiled
    std::string user;                      // user name or numeric uid the JVM runs as
    std::optional<bool> container;         // in a container (true) or on the host (false)
    // Globs (fnmatch) on the JVM's container (daemon/jvms/container_identity.h): its name (the
    // runtime's, or Kubernetes' container name) or, failing that, its hostname; its pod; its
    // Kubernetes namespace. A JVM on the host has none of them.
    std::string container_name, pod, pod_namespace;
};

// What a rule does when it fires: dump the JVM, or have heapd's agent sample its allocations (so
// that a later dump, at an OutOfMemoryError or by another rule, says where its objects came from).
enum class rule_action { dump, sample };

// When a rule dumps: on a schedule, on thresholds read from hsperfdata (no attach), or both.
struct dump_rule {
    std::string name;  // unique; dumps it takes have trigger "rule:NAME"
    int line = 0;      // where the rule starts in the config file, for messages
    jvm_selector select;
    std::optional<std::chrono::seconds> every;  // a dump every so often while the JVM runs
    // Old-generation (or heap) occupancy (used / max, in percent) as collections leave it
    // (formats/hsperf/gc_occupancy.h), above this for old_gen_collections measurements in a row.
    std::optional<double> old_gen_percent;
    unsigned old_gen_collections = 1;
    // The share of wall time spent in GC over the last gc_window, in percent, above this.
    std::optional<double> gc_time_percent;
    std::chrono::seconds gc_window{60};
    // The old generation (or heap) predicted full within this time by its trend over predict_window
    // (daemon/rules/heap_trend.h).
    std::optional<std::chrono::seconds> predict_full_within;
    std::chrono::seconds predict_window{600};
    // The JVM process's resident memory over the limit that holds it (its memory cgroup's, else the
    // host's memory: daemon/jvms/memory_probe.h), in percent, above this for memory_polls polls in a
    // row: the kernel's OOM killer ends the process at 100%, whatever its heap.
    std::optional<double> memory_percent;
    unsigned memory_polls = 2;
    // The JVM process's resident memory predicted to reach that limit within this time, by its trend
    // over memory_window (the heap trend's rules, daemon/rules/heap_trend.h, on the resident bytes
    // read at each poll): off-heap growth seen coming before the kernel's OOM kill.
    std::optional<std::chrono::seconds> memory_full_within;
    std::chrono::seconds memory_window{120};
    std::chrono::seconds cooldown{3600};  // no second dump of one JVM by this rule within this time
    unsigned max_dumps = 3;               // dumps of one JVM (pid and start time) by this rule; 0: no limit
    bool live = true;                     // only reachable objects (a full GC first)
    rule_action action = rule_action::dump;
    std::int64_t sample_interval = 512 * 1024;  // sample: bytes between samples, per thread
    int sample_depth = 16;                      // sample: frames per sample
};

// Which JVMs the daemon arms for their OutOfMemoryError ([oom] arm).
enum class arm_mode {
    none,    // none (arm = false)
    hooked,  // those whose OnOutOfMemoryError runs heapd's hook
    all,     // every JVM (those [[oom.select]] names, when it names any), hooked or not
};

// Arming JVMs ahead of their OutOfMemoryError (oom_armer.h).
struct oom_options {
    arm_mode arm = arm_mode::all;
    // With arm_mode::all: only the JVMs one of these selects (none: every JVM); a JVM whose hook
    // runs heapd is armed whatever they say.
    std::vector<jvm_selector> select;
    std::chrono::milliseconds poll_interval{2000};  // how often new JVMs are looked for
    std::chrono::milliseconds recheck{60000};       // how often an armed JVM's flags are read again
};

// Where and how often the daemon writes its Prometheus metrics.
struct metrics_options {
    std::string textfile;  // node_exporter textfile-collector file; "" for none
    std::chrono::seconds interval{30};
};

// Where `heapd upload` sends each kept report (and, when asked, its dump stripped and compressed):
// an S3-compatible bucket. Nothing is uploaded while endpoint is "".
struct upload_options {
    std::string endpoint;          // "https://s3.eu-west-1.amazonaws.com", "http://127.0.0.1:9000"
    std::string bucket;            // addressed by path: ENDPOINT/BUCKET/KEY
    std::string prefix = "heapd";  // keys are PREFIX/HOST/MAIN CLASS/DUMP ID/report.json, ...
    std::string region = "us-east-1";
    // "ACCESS_KEY_ID:SECRET_ACCESS_KEY" (or aws_access_key_id = / aws_secret_access_key = lines),
    // readable by its owner only; "": $CREDENTIALS_DIRECTORY/s3, the credential systemd passes to
    // heapd-upload.service (LoadCredential=s3:/etc/heapd/s3-credentials).
    std::string credentials_file;
    bool html = true;                                 // report.html beside report.json
    bool dump = false;                                // dump.hprof.gz: primitive arrays zeroed (heapd strip), gzip
    bool deaths = true;                               // the death records: PREFIX/HOST/MAIN CLASS/DEATH ID/death.json
    std::uint64_t part_size = 16u << 20;              // multipart parts, for files larger than one part
    std::string state_dir = "/var/lib/heapd-upload";  // the queue and what is done, across restarts
    std::chrono::seconds interval{10};                // how often the store is looked at
    std::string metrics_textfile;                     // node_exporter textfile for upload metrics; "" none
};

// Everything the config file says, with the defaults for what it leaves out.
struct heapd_config {
    serve_options serve;
    metrics_options metrics;
    upload_options upload;
    std::chrono::milliseconds poll_interval{5000};  // how often rules read the JVMs' hsperfdata
    std::vector<dump_rule> rules;
    oom_options oom;
};

}  // namespace heapd::daemon
