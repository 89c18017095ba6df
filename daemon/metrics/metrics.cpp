#include "daemon/metrics/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <utility>
#include <vector>

#include "attach/process_info.h"
#include "daemon/jvms/container_identity.h"

namespace heapd::daemon {
namespace {

using label = std::pair<std::string_view, std::string>;

// One metric family as it is written: HELP, TYPE, then its samples; nothing when it has none.
class family {
public:
    family(std::string& out, std::string_view name, std::string_view type, std::string_view help)
        : out_(out), name_(name), type_(type), help_(help) {}
    ~family() {
        if (samples_.empty()) return;
        out_ += "# HELP " + name_ + " " + escape_help(help_) + "\n";
        out_ += "# TYPE " + name_ + " " + type_ + "\n";
        out_ += samples_;
    }
    family(const family&) = delete;
    family& operator=(const family&) = delete;

    // A sample of this family, or of a series of it (suffix: _bucket, _sum, _count).
    void sample(std::initializer_list<label> labels, double value, std::string_view suffix = {}) {
        sample(std::vector<label>(labels), value, suffix);
    }
    void sample(const std::vector<label>& labels, double value, std::string_view suffix = {}) {
        samples_ += name_;
        samples_ += suffix;
        if (labels.size() > 0) {
            samples_ += '{';
            bool first = true;
            for (const auto& [k, v] : labels) {
                if (!first) samples_ += ',';
                first = false;
                samples_ += k;
                samples_ += "=\"";
                samples_ += escape_label_value(v);
                samples_ += '"';
            }
            samples_ += '}';
        }
        samples_ += ' ';
        samples_ += format_value(value);
        samples_ += '\n';
    }

private:
    std::string& out_;
    std::string name_, type_, help_;
    std::string samples_;
};

double as_double(std::int64_t v) { return static_cast<double>(v); }

// The length of the well-formed UTF-8 sequence at the start of s (1 to 4), or 0 when it is not one
// (a stray continuation byte, an overlong form, a surrogate, beyond U+10FFFF, cut short).
std::size_t utf8_sequence(std::string_view s) {
    const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
    const unsigned char c = b(0);
    if (c < 0x80) return 1;
    std::size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (n == 0 || s.size() < n) return 0;
    for (std::size_t i = 1; i < n; ++i)
        if ((b(i) & 0xc0) != 0x80) return 0;
    if (c == 0xe0 && b(1) < 0xa0) return 0;   // overlong
    if (c == 0xed && b(1) >= 0xa0) return 0;  // surrogate
    if (c == 0xf0 && b(1) < 0x90) return 0;   // overlong
    if (c == 0xf4 && b(1) >= 0x90) return 0;  // beyond U+10FFFF
    return n;
}

// A family with one sample per JVM that has a value for it.
void per_jvm(std::string& out, const std::vector<jvm_metrics>& jvms, std::string_view name, std::string_view type,
             std::string_view help, const std::function<std::optional<double>(const jvm_metrics&)>& value) {
    family f(out, name, type, help);
    for (const jvm_metrics& j : jvms)
        if (auto v = value(j)) {
            std::vector<label> labels = {
                {"pid", std::to_string(j.pid)}, {"main_class", j.main_class}, {"user", j.user}};
            // A JVM in a container: the labels Kubernetes tooling names them by (none on the host).
            for (const auto& [key, text] :
                 {std::pair<std::string_view, const std::string&>{"namespace", j.pod_namespace},
                  {"pod", j.pod},
                  {"container", j.container}})
                if (!text.empty()) labels.emplace_back(key, text);
            f.sample(labels, *v);
        }
}

void render_histogram(family& f, std::string_view key, const std::string& value, const seconds_histogram& h) {
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i <= h.bounds.size(); ++i) {
        cumulative += i < h.counts.size() ? h.counts[i] : 0;
        const double le = i < h.bounds.size() ? h.bounds[i] : INFINITY;
        f.sample({{key, value}, {"le", format_value(le)}}, static_cast<double>(cumulative), "_bucket");
    }
    f.sample({{key, value}}, h.sum, "_sum");
    f.sample({{key, value}}, static_cast<double>(h.count), "_count");
}

}  // namespace

seconds_histogram seconds_histogram::with_bounds(std::vector<double> bounds) {
    std::sort(bounds.begin(), bounds.end());
    seconds_histogram h;
    h.counts.assign(bounds.size() + 1, 0);
    h.bounds = std::move(bounds);
    return h;
}

void seconds_histogram::observe(double seconds) {
    if (counts.size() != bounds.size() + 1) counts.resize(bounds.size() + 1, 0);
    const auto at = std::lower_bound(bounds.begin(), bounds.end(), seconds);  // le: a bound includes itself
    ++counts[static_cast<std::size_t>(at - bounds.begin())];
    sum += seconds;
    ++count;
}

std::vector<double> analysis_seconds_bounds() { return {0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800}; }

std::optional<jvm_metrics> jvm_metrics_of(const jvm_facts& f) {
    if (!f.summary || !f.summary->accessible) return std::nullopt;  // a JVM still creating its counters
    const jvm_perf_summary& s = *f.summary;
    jvm_metrics m;
    m.pid = f.jvm.pid;
    m.uid = f.jvm.uid;
    m.main_class = s.main_class;
    m.user = f.jvm.user;
    if (f.jvm.in_container)
        if (auto info = attach::read_process_info(f.jvm.pid)) {
            const container_identity c = container_of(f.jvm.pid, info->start_time);
            m.pod_namespace = c.pod_namespace;
            m.pod = c.pod;
            m.container = !c.name.empty() ? c.name : c.label();
        }
    m.heap_used = s.heap.used;
    m.heap_committed = s.heap.capacity;
    m.heap_max = s.heap.max_capacity;
    if (s.old_gen) {
        m.old_used = s.old_gen->used;
        m.old_max = s.old_gen->max_capacity;
        if (s.old_gen->max_capacity > 0) m.old_occupancy = s.old_gen->occupancy();
    }
    m.gc_seconds = s.gc_seconds;
    m.gc_time_share = s.gc_time_share;
    m.uptime_seconds = s.uptime_seconds;
    return m;
}

metrics_snapshot visible_to(metrics_snapshot s, uid_t uid) {
    std::erase_if(s.jvms, [uid](const jvm_metrics& j) { return j.uid != uid; });
    std::erase_if(s.daemon.store, [uid](const store_usage& u) { return u.owner != uid; });
    std::erase_if(s.jvm_owners, [uid](uid_t owner) { return owner != uid; });
    return s;
}

std::string escape_label_value(std::string_view v) {
    std::string out;
    out.reserve(v.size());
    while (!v.empty()) {
        const char c = v[0];
        const std::size_t n = utf8_sequence(v);
        if (n == 0)
            out += "\xef\xbf\xbd";  // U+FFFD: label values must be UTF-8
        else if (c == '\\')
            out += "\\\\";
        else if (c == '"')
            out += "\\\"";
        else if (c == '\n')
            out += "\\n";
        else
            out.append(v.substr(0, n));
        v.remove_prefix(n == 0 ? 1 : n);
    }
    return out;
}

std::string escape_help(std::string_view v) {
    std::string out;
    out.reserve(v.size());
    for (char c : v) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '\n')
            out += "\\n";
        else
            out += c;
    }
    return out;
}

std::string format_value(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    char buf[64];
    std::to_chars_result r;
    if (v == std::trunc(v) && std::fabs(v) < 9007199254740992.0)
        r = std::to_chars(buf, buf + sizeof buf, static_cast<long long>(v));
    else
        r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

namespace {

// The daemon's own families: build, jobs, arming, store, dumps, analyses, JVMs found.
void render_daemon(std::string& out, const metrics_snapshot& s) {
    const daemon_metrics& d = s.daemon;
    {
        family f(out, "heapd_build_info", "gauge", "The heapd that serves these metrics: its version and protocol.");
        f.sample({{"version", d.version}, {"protocol", std::to_string(d.protocol)}}, 1);
    }
    {
        family f(out, "heapd_start_time_seconds", "gauge", "When the daemon started, in seconds since the epoch.");
        f.sample({}, d.start_time_seconds);
    }
    {
        family f(out, "heapd_jobs", "gauge", "Jobs of the daemon waiting (queued) and running now.");
        f.sample({{"state", "queued"}}, d.jobs_queued);
        f.sample({{"state", "running"}}, d.jobs_running);
    }
    {
        family f(out, "heapd_oom_arming_jvms", "gauge",
                 "JVMs heapd arms for their OutOfMemoryError, by state: armed (heapd's dump path), own_path "
                 "(the JVM's own HeapDumpPath), not_armed (see the log or heapctl jvms for why).");
        for (const char* state : {"armed", "own_path", "not_armed"}) {
            auto it = d.oom_arming.find(state);
            f.sample({{"state", state}}, static_cast<double>(it == d.oom_arming.end() ? 0 : it->second));
        }
    }
    std::uint64_t store_bytes = 0;
    for (const store_usage& u : d.store) store_bytes += u.bytes;
    {
        family f(out, "heapd_store_entries", "gauge", "Dumps and reports kept in the store.");
        f.sample({}, static_cast<double>(d.store.size()));
    }
    {
        family f(out, "heapd_store_bytes", "gauge", "Bytes the store's entries take (dumps, reports, metadata).");
        f.sample({}, static_cast<double>(store_bytes));
    }
    {
        family f(out, "heapd_dumps_total", "counter", "Heap dumps taken and kept, by what triggered them.");
        for (const auto& [trigger, n] : d.dumps) f.sample({{"trigger", trigger}}, static_cast<double>(n));
    }
    {
        family f(out, "heapd_dump_failures_total", "counter", "Heap dumps that failed, by what triggered them.");
        for (const auto& [trigger, n] : d.dump_failures) f.sample({{"trigger", trigger}}, static_cast<double>(n));
    }
    {
        family f(out, "heapd_jvm_deaths_total", "counter",
                 "JVMs that died while heapd watched them, by cause: oom_kill (the kernel's OOM killer), killed, "
                 "crashed, stopped, exited, failed (an exit code but 0), unknown.");
        for (const auto& [cause, n] : d.deaths) f.sample({{"cause", cause}}, static_cast<double>(n));
    }
    if (d.jvms_watched) {
        family f(out, "heapd_jvms_watched", "gauge", "JVMs heapd watches for their end (a pidfd each).");
        f.sample({}, static_cast<double>(*d.jvms_watched));
    }
    {
        family f(out, "heapd_analysis_duration_seconds", "histogram",
                 "How long analyses of heap dumps took, by job kind (dump: a JVM dumped by heapd, analyze: a file "
                 "given by heapctl report).");
        for (const auto& [kind, h] : d.analysis) render_histogram(f, "kind", kind, h);
    }
    {
        family f(out, "heapd_jvms", "gauge", "HotSpot JVMs found on this host (through their hsperfdata files).");
        f.sample({}, static_cast<double>(s.jvm_owners.size()));
    }
}

// The families with one sample per JVM.
void render_jvms(std::string& out, const metrics_snapshot& s) {
    const auto& j = s.jvms;
    per_jvm(out, j, "heapd_jvm_heap_used_bytes", "gauge", "Bytes used in the JVM's heap.",
            [](const jvm_metrics& m) { return as_double(m.heap_used); });
    per_jvm(out, j, "heapd_jvm_heap_committed_bytes", "gauge", "Bytes of the JVM's heap committed (its capacity now).",
            [](const jvm_metrics& m) { return as_double(m.heap_committed); });
    per_jvm(out, j, "heapd_jvm_heap_max_bytes", "gauge", "The most bytes the JVM's heap may grow to.",
            [](const jvm_metrics& m) { return as_double(m.heap_max); });
    per_jvm(out, j, "heapd_jvm_old_gen_used_bytes", "gauge", "Bytes used in the JVM's old generation.",
            [](const jvm_metrics& m) { return m.old_used ? std::optional(as_double(*m.old_used)) : std::nullopt; });
    per_jvm(out, j, "heapd_jvm_old_gen_max_bytes", "gauge", "The most bytes the JVM's old generation may grow to.",
            [](const jvm_metrics& m) { return m.old_max ? std::optional(as_double(*m.old_max)) : std::nullopt; });
    per_jvm(out, j, "heapd_jvm_old_gen_occupancy_ratio", "gauge",
            "The JVM's old generation used over its maximum (0 to 1).",
            [](const jvm_metrics& m) { return m.old_occupancy; });
    per_jvm(out, j, "heapd_jvm_after_gc_occupancy_ratio", "gauge",
            "The JVM's old generation (its heap for ZGC and Shenandoah) used over its maximum as its latest "
            "collections left it (0 to 1).",
            [](const jvm_metrics& m) { return m.after_gc_occupancy; });
    per_jvm(out, j, "heapd_jvm_predicted_full_seconds", "gauge",
            "Seconds until the JVM's old generation (or heap) is full at the rate what its collections leave "
            "rises; absent while it does not rise steadily.",
            [](const jvm_metrics& m) { return m.predicted_full_seconds; });
    per_jvm(out, j, "heapd_jvm_gc_time_ratio", "gauge",
            "The share of the JVM's life spent in garbage collection (0 to 1); rate() of "
            "heapd_jvm_gc_seconds_total gives it over a window.",
            [](const jvm_metrics& m) { return m.gc_time_share; });
    per_jvm(out, j, "heapd_jvm_gc_seconds_total", "counter",
            "Seconds the JVM spent in garbage collection, all collectors.",
            [](const jvm_metrics& m) { return std::optional(m.gc_seconds); });
    per_jvm(out, j, "heapd_jvm_uptime_seconds", "gauge", "Seconds since the JVM started.",
            [](const jvm_metrics& m) { return std::optional(m.uptime_seconds); });
    per_jvm(out, j, "heapd_jvm_resident_bytes", "gauge",
            "Bytes of the JVM's process in memory (its resident set: heap, native memory, mapped files).",
            [](const jvm_metrics& m) { return m.resident ? std::optional(as_double(*m.resident)) : std::nullopt; });
    per_jvm(
        out, j, "heapd_jvm_memory_limit_bytes", "gauge",
        "The memory the JVM's process may hold: its memory cgroup's limit (the tightest of its ancestors'), "
        "else the host's memory.",
        [](const jvm_metrics& m) { return m.memory_limit ? std::optional(as_double(*m.memory_limit)) : std::nullopt; });
    per_jvm(out, j, "heapd_jvm_memory_limit_ratio", "gauge",
            "The JVM's resident memory over its limit (0 to 1): near 1, the kernel's OOM killer ends it.",
            [](const jvm_metrics& m) -> std::optional<double> {
                if (!m.resident || !m.memory_limit || *m.memory_limit <= 0) return std::nullopt;
                return as_double(*m.resident) / as_double(*m.memory_limit);
            });
}

}  // namespace

std::string render_metrics(const metrics_snapshot& s) {
    std::string out;
    render_daemon(out, s);
    render_jvms(out, s);
    return out;
}

}  // namespace heapd::daemon
