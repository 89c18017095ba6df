#include "formats/report/fleet_view.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "base/safe_text.h"
#include "formats/report/quantities.h"

namespace heapd {
inline namespace report {
namespace {

using json = nlohmann::ordered_json;

// A finding while it is gathered: its hosts and JVMs by name.
struct finding_builder {
    fleet_finding f;
    std::set<std::string> services;
    std::map<std::string, std::uint64_t> hosts;
    // By host, pid and start time; a report that names no pid is a JVM of its own (by its key).
    std::map<std::tuple<std::string, std::int64_t, std::uint64_t, std::string>, fleet_jvm_trend> jvms;
};

bool is_oom(const fleet_entry& e) { return e.trigger == "oom"; }

void add_sighting(finding_builder& b, const fleet_entry& e, const fleet_suspect& s) {
    fleet_finding& f = b.f;
    if (f.reports == 0) {
        f.signature = s.signature;
        f.class_name = s.class_name;
        f.held_in = s.held_in;
        f.path = s.path;
        f.is_class = s.is_class;
        f.first_ms = f.last_ms = e.time_ms;
        f.min_bytes = f.max_bytes = s.retained_bytes;
    }
    ++f.reports;
    f.oom_reports += is_oom(e) ? 1 : 0;
    f.first_ms = std::min(f.first_ms, e.time_ms);
    f.last_ms = std::max(f.last_ms, e.time_ms);
    f.min_bytes = std::min(f.min_bytes, s.retained_bytes);
    f.max_bytes = std::max(f.max_bytes, s.retained_bytes);
    f.max_share = std::max(f.max_share, s.share);
    f.sightings.push_back({e.key, e.host, e.time_ms, e.trigger, s.retained_bytes});
    b.services.insert(e.service);
    ++b.hosts[e.host];
    fleet_jvm_trend& t = b.jvms[{e.host, e.pid, e.jvm_start_time, e.pid == 0 ? e.key : std::string()}];
    if (t.reports == 0 || e.time_ms < t.first_ms) {
        t.first_ms = e.time_ms;
        t.first_bytes = s.retained_bytes;
    }
    if (t.reports == 0 || e.time_ms >= t.last_ms) {
        t.last_ms = e.time_ms;
        t.last_bytes = s.retained_bytes;
    }
    t.host = e.host;
    t.pid = e.pid;
    t.jvm_start_time = e.jvm_start_time;
    ++t.reports;
}

// The last step of a signature's path that is a class object ("class Sessions.static LEAK"), without
// the word "class".
std::string anchor_of(const std::string& path) {
    static constexpr std::string_view arrow = " → ";
    std::string found;
    for (std::size_t from = path.find(": ") == std::string::npos ? 0 : path.find(": ") + 2; from <= path.size();) {
        const std::size_t end = std::min(path.find(arrow, from), path.size());
        const std::string_view step = std::string_view(path).substr(from, end - from);
        if (step.starts_with("class ")) found = step.substr(6);
        from = end + arrow.size();
    }
    return found;
}

fleet_finding finish(finding_builder& b) {
    fleet_finding f = std::move(b.f);
    f.anchor = anchor_of(f.path);
    f.services.assign(b.services.begin(), b.services.end());
    f.hosts.assign(b.hosts.begin(), b.hosts.end());
    std::stable_sort(f.hosts.begin(), f.hosts.end(), [](const auto& a, const auto& c) { return a.second > c.second; });
    for (auto& [key, trend] : b.jvms) f.jvms.push_back(trend);
    std::stable_sort(f.jvms.begin(), f.jvms.end(), [](const fleet_jvm_trend& a, const fleet_jvm_trend& c) {
        return a.bytes_per_hour() > c.bytes_per_hour();
    });
    std::sort(f.sightings.begin(), f.sightings.end(), [](const fleet_sighting& a, const fleet_sighting& c) {
        return std::tie(c.time_ms, c.key) < std::tie(a.time_ms, a.key);
    });
    return f;
}

// "12.5 MiB/h" for a rate of growth (negative: shrinking).
std::string rate_text(double bytes_per_hour) {
    const double magnitude = bytes_per_hour < 0 ? -bytes_per_hour : bytes_per_hour;
    return (bytes_per_hour < 0 ? "-" : "+") + text::human_bytes(static_cast<std::uint64_t>(magnitude)) + "/h";
}

}  // namespace

double fleet_jvm_trend::bytes_per_hour() const {
    if (reports < 2 || last_ms <= first_ms) return 0;
    const double delta = static_cast<double>(last_bytes) - static_cast<double>(first_bytes);
    return delta * 3600000.0 / static_cast<double>(last_ms - first_ms);
}

fleet_view build_fleet_view(const std::vector<fleet_entry>& entries, const fleet_filter& filter) {
    fleet_view v;
    std::map<std::string, finding_builder> findings;
    std::map<std::string, fleet_service> services;
    std::map<std::string, std::set<std::string>> service_hosts;
    std::set<std::string> hosts;
    for (const fleet_entry& e : entries) {
        if (e.time_ms < filter.since_ms) continue;
        if (!filter.service.empty() && e.service != filter.service) continue;
        v.first_ms = v.reports == 0 ? e.time_ms : std::min(v.first_ms, e.time_ms);
        v.last_ms = v.reports == 0 ? e.time_ms : std::max(v.last_ms, e.time_ms);
        ++v.reports;
        v.oom_reports += is_oom(e) ? 1 : 0;
        // A signature counts once per report, at its biggest; small suspects not at all.
        std::map<std::string, const fleet_suspect*> distinct;
        const fleet_suspect* top = nullptr;
        for (const fleet_suspect& x : e.suspects) {
            if (x.retained_bytes < filter.min_retained) continue;
            if (top == nullptr) top = &x;
            const fleet_suspect*& kept = distinct[x.signature];
            if (kept == nullptr || x.retained_bytes > kept->retained_bytes) kept = &x;
        }
        v.without_suspect += top == nullptr ? 1 : 0;
        hosts.insert(e.host);
        fleet_service& s = services[e.service];
        s.name = e.service;
        ++s.reports;
        s.oom_reports += is_oom(e) ? 1 : 0;
        service_hosts[e.service].insert(e.host);
        s.points.push_back(
            {e.key, e.host, e.trigger, e.time_ms, e.reachable_bytes, top == nullptr ? std::string() : top->signature});
        for (const auto& [signature, x] : distinct) add_sighting(findings[signature], e, *x);
    }
    v.hosts.assign(hosts.begin(), hosts.end());
    for (auto& [name, s] : services) {
        s.hosts.assign(service_hosts[name].begin(), service_hosts[name].end());
        std::sort(s.points.begin(), s.points.end(), [](const fleet_point& a, const fleet_point& b) {
            return std::tie(a.time_ms, a.key) < std::tie(b.time_ms, b.key);
        });
        v.services.push_back(std::move(s));
    }
    std::stable_sort(v.services.begin(), v.services.end(),
                     [](const fleet_service& a, const fleet_service& b) { return a.reports > b.reports; });
    for (auto& [signature, b] : findings) v.findings.push_back(finish(b));
    std::stable_sort(v.findings.begin(), v.findings.end(), [](const fleet_finding& a, const fleet_finding& b) {
        return std::tuple(a.hosts.size(), a.reports, a.max_bytes) > std::tuple(b.hosts.size(), b.reports, b.max_bytes);
    });
    return v;
}

json to_json(const fleet_view& v) {
    json findings = json::array();
    for (const fleet_finding& f : v.findings) {
        json hosts = json::array(), jvms = json::array(), sightings = json::array();
        for (const auto& [host, n] : f.hosts) hosts.push_back({{"host", host}, {"reports", n}});
        for (const fleet_jvm_trend& t : f.jvms)
            jvms.push_back({{"host", t.host},
                            {"pid", t.pid},
                            {"jvm_start_time", t.jvm_start_time},
                            {"reports", t.reports},
                            {"first_ms", t.first_ms},
                            {"last_ms", t.last_ms},
                            {"first_bytes", t.first_bytes},
                            {"last_bytes", t.last_bytes},
                            {"bytes_per_hour", t.bytes_per_hour()}});
        for (const fleet_sighting& s : f.sightings)
            sightings.push_back({{"key", s.key},
                                 {"host", s.host},
                                 {"time_ms", s.time_ms},
                                 {"trigger", s.trigger},
                                 {"retained_bytes", s.retained_bytes}});
        findings.push_back({{"signature", f.signature},
                            {"class", f.class_name},
                            {"is_class", f.is_class},
                            {"held_in", f.held_in},
                            {"path", f.path},
                            {"anchor", f.anchor},
                            {"services", f.services},
                            {"hosts", hosts},
                            {"reports", f.reports},
                            {"oom_reports", f.oom_reports},
                            {"first_ms", f.first_ms},
                            {"last_ms", f.last_ms},
                            {"min_bytes", f.min_bytes},
                            {"max_bytes", f.max_bytes},
                            {"max_share", f.max_share},
                            {"jvms", jvms},
                            {"reports_list", sightings}});
    }
    json services = json::array();
    for (const fleet_service& s : v.services) {
        json points = json::array();
        for (const fleet_point& p : s.points)
            points.push_back({{"key", p.key},
                              {"host", p.host},
                              {"time_ms", p.time_ms},
                              {"trigger", p.trigger},
                              {"reachable_bytes", p.reachable_bytes},
                              {"finding", p.finding}});
        services.push_back({{"service", s.name},
                            {"reports", s.reports},
                            {"oom_reports", s.oom_reports},
                            {"hosts", s.hosts},
                            {"timeline", points}});
    }
    return {{"reports", v.reports}, {"oom_reports", v.oom_reports}, {"without_suspect", v.without_suspect},
            {"hosts", v.hosts},     {"first_ms", v.first_ms},       {"last_ms", v.last_ms},
            {"findings", findings}, {"services", services}};
}

std::string render_text(const fleet_view& v, unsigned top) {
    using text::fmt;
    std::string out = fmt("%llu report%s from %zu host%s, %zu service%s", static_cast<unsigned long long>(v.reports),
                          v.reports == 1 ? "" : "s", v.hosts.size(), v.hosts.size() == 1 ? "" : "s", v.services.size(),
                          v.services.size() == 1 ? "" : "s");
    if (v.reports != 0)
        out += ", " + text::utc_time(static_cast<std::uint64_t>(v.first_ms)) + " to " +
               text::utc_time(static_cast<std::uint64_t>(v.last_ms));
    out += fmt("; %llu after an OutOfMemoryError, %llu without a leak suspect\n",
               static_cast<unsigned long long>(v.oom_reports), static_cast<unsigned long long>(v.without_suspect));
    out += fmt("\nFindings: %zu (one per leak signature)\n", v.findings.size());
    for (unsigned i = 0; i < text::rows(v.findings.size(), top); ++i) {
        const fleet_finding& f = v.findings[i];
        out += fmt("\n%u. ", i + 1) + (f.is_class ? "instances of " : "") + line_safe(f.class_name) +
               (f.anchor.empty() ? "" : " in " + line_safe(f.anchor)) + " [" + line_safe(f.signature) + "]\n";
        std::string services;
        for (const std::string& s : f.services) services += (services.empty() ? "" : ", ") + line_safe(s);
        out += fmt("   %zu host%s, %llu report%s (%llu after an OOM); ", f.hosts.size(), f.hosts.size() == 1 ? "" : "s",
                   static_cast<unsigned long long>(f.reports), f.reports == 1 ? "" : "s",
                   static_cast<unsigned long long>(f.oom_reports)) +
               (f.services.size() == 1 ? "service " : "services ") + services + "\n";
        out += "   seen " + text::utc_time(static_cast<std::uint64_t>(f.first_ms)) + " to " +
               text::utc_time(static_cast<std::uint64_t>(f.last_ms)) + "; retains " + text::human_bytes(f.min_bytes) +
               " to " + text::human_bytes(f.max_bytes) + " (up to " + text::round_percent(f.max_share * 100) +
               " of the reachable heap)\n";
        if (!f.jvms.empty() && f.jvms.front().reports > 1) {
            const fleet_jvm_trend& t = f.jvms.front();
            out += "   fastest: " + line_safe(t.host) + fmt(" pid %lld, ", static_cast<long long>(t.pid)) +
                   text::human_bytes(t.first_bytes) + " to " + text::human_bytes(t.last_bytes) + " in " +
                   text::clock_text(static_cast<std::uint64_t>(t.last_ms - t.first_ms)) + " (" +
                   rate_text(t.bytes_per_hour()) + ")\n";
        }
        std::string hosts;
        for (const auto& [host, n] : f.hosts)
            hosts += (hosts.empty() ? "" : ", ") + line_safe(host) + fmt(" (%llu)", static_cast<unsigned long long>(n));
        text::wrapped_list(out, "   ", "hosts: " + hosts);
        text::wrapped_path(out, "   ", "path: " + line_safe(f.path));
        out += "   held in: " + line_safe(f.held_in) + "\n";
    }
    if (top != 0 && v.findings.size() > top)
        out += fmt("\n(%zu more findings: --top 0 shows all)\n", v.findings.size() - top);
    out += "\nServices:\n";
    for (unsigned i = 0; i < text::rows(v.services.size(), top); ++i) {
        const fleet_service& s = v.services[i];
        out += "  " + line_safe(s.name) +
               fmt(": %llu report%s on %zu host%s, %llu after an OOM\n", static_cast<unsigned long long>(s.reports),
                   s.reports == 1 ? "" : "s", s.hosts.size(), s.hosts.size() == 1 ? "" : "s",
                   static_cast<unsigned long long>(s.oom_reports));
    }
    return out;
}

}  // namespace report
}  // namespace heapd
