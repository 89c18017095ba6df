#include "formats/memory/memory_report.h"

#include <algorithm>
#include <vector>

#include "base/safe_text.h"
#include "formats/report/quantities.h"

namespace heapd {
inline namespace memory {
namespace {

using text::fmt;
using text::human_bytes;

void put(memory_json& j, const char* key, const std::optional<std::int64_t>& v) {
    if (v) j[key] = *v;
}

// Reads an optional integer field; false when present and no integer.
bool get(const memory_json& j, const char* key, std::optional<std::int64_t>& out) {
    const auto it = j.find(key);
    if (it == j.end()) return true;
    if (!it->is_number_integer()) return false;
    out = it->get<std::int64_t>();
    return true;
}

bool get_string(const memory_json& j, const char* key, std::string& out) {
    const auto it = j.find(key);
    if (it == j.end()) return true;
    if (!it->is_string()) return false;
    out = it->get<std::string>();
    return true;
}

memory_json nmt_json(const nmt_summary& s) {
    memory_json j{{"reserved", s.reserved}, {"committed", s.committed}};
    put(j, "threads", s.threads);
    put(j, "stack_committed", s.stack_committed);
    put(j, "metadata_committed", s.metadata_committed);
    put(j, "class_space_committed", s.class_space_committed);
    memory_json categories = memory_json::array();
    for (const nmt_category& c : s.categories)
        categories.push_back({{"name", c.name}, {"reserved", c.reserved}, {"committed", c.committed}});
    j["categories"] = std::move(categories);
    return j;
}

result<nmt_summary> nmt_from_json(const memory_json& j) {
    nmt_summary s;
    std::optional<std::int64_t> reserved, committed;
    if (!j.is_object() || !get(j, "reserved", reserved) || !get(j, "committed", committed) ||
        !get(j, "threads", s.threads) || !get(j, "stack_committed", s.stack_committed) ||
        !get(j, "metadata_committed", s.metadata_committed) ||
        !get(j, "class_space_committed", s.class_space_committed))
        return fail(error_code::bad_value, "memory: nmt is malformed");
    s.reserved = reserved.value_or(0);
    s.committed = committed.value_or(0);
    if (const auto it = j.find("categories"); it != j.end() && it->is_array())
        for (const memory_json& c : *it) {
            nmt_category cat;
            std::optional<std::int64_t> r, k;
            if (!c.is_object() || !get_string(c, "name", cat.name) || !get(c, "reserved", r) || !get(c, "committed", k))
                return fail(error_code::bad_value, "memory: an nmt category is malformed");
            cat.reserved = r.value_or(0);
            cat.committed = k.value_or(0);
            s.categories.push_back(std::move(cat));
        }
    return s;
}

// "Java heap" for "java_heap".
std::string title_of(const std::string& name) {
    if (name == "java_heap") return "Java heap";
    if (name == "metaspace") return "Metaspace";
    if (name == "code_cache") return "Code cache";
    if (name == "thread_stacks") return "Thread stacks";
    if (name == "mapped_files") return "Mapped files";
    if (name == "other_native") return "Other native";
    return name;
}

std::string cell(const std::optional<std::int64_t>& v) {
    return v ? human_bytes(static_cast<std::uint64_t>(*v)) : std::string("-");
}

}  // namespace

memory_json to_json(const memory_breakdown& b) {
    memory_json j{{"pid", b.pid},
                  {"at_ms", b.at_ms},
                  {"resident", b.resident},
                  {"anonymous", b.anonymous},
                  {"file_resident", b.file_resident},
                  {"swap", b.swap}};
    memory_json limit = memory_json::object();
    put(limit, "bytes", b.limit.bytes);
    limit["source"] = b.limit.source;
    limit["by_cgroup"] = b.limit.by_cgroup;
    if (b.limit.cgroup_version != 0) limit["cgroup_version"] = b.limit.cgroup_version;
    put(limit, "cgroup_usage", b.limit.cgroup_usage);
    put(limit, "cgroup_anonymous", b.limit.cgroup_anonymous);
    put(limit, "oom_kills", b.limit.oom_kills);
    put(limit, "swap_limit", b.limit.swap_limit);
    if (const auto& pr = b.limit.pressure)
        limit["pressure"] = {{"source", b.limit.pressure_source},
                             {"some_avg10", pr->some_avg10},
                             {"some_avg60", pr->some_avg60},
                             {"full_avg10", pr->full_avg10},
                             {"full_avg60", pr->full_avg60}};
    j["limit"] = std::move(limit);
    if (const auto p = b.percent_of_limit()) j["percent_of_limit"] = *p;
    memory_json parts = memory_json::array();
    for (const memory_part& p : b.parts) {
        memory_json e{{"name", p.name}};
        put(e, "resident", p.resident);
        put(e, "committed", p.committed);
        put(e, "used", p.used);
        put(e, "count", p.count);
        e["source"] = p.source;
        parts.push_back(std::move(e));
    }
    j["parts"] = std::move(parts);
    if (b.nmt) j["nmt"] = nmt_json(*b.nmt);
    j["notes"] = b.notes;
    return j;
}

result<memory_breakdown> breakdown_from_json(const memory_json& j) {
    memory_breakdown b;
    std::optional<std::int64_t> pid, at, resident, anonymous, file_resident, swap;
    if (!j.is_object() || !get(j, "pid", pid) || !get(j, "at_ms", at) || !get(j, "resident", resident) ||
        !get(j, "anonymous", anonymous) || !get(j, "file_resident", file_resident) || !get(j, "swap", swap))
        return fail(error_code::bad_value, "memory: a figure is no integer");
    b.pid = static_cast<pid_t>(pid.value_or(0));
    b.at_ms = at.value_or(0);
    b.resident = resident.value_or(0);
    b.anonymous = anonymous.value_or(0);
    b.file_resident = file_resident.value_or(0);
    b.swap = swap.value_or(0);
    if (const auto it = j.find("limit"); it != j.end()) {
        std::optional<std::int64_t> version;
        if (!it->is_object() || !get(*it, "bytes", b.limit.bytes) || !get_string(*it, "source", b.limit.source) ||
            !get(*it, "cgroup_version", version) || !get(*it, "cgroup_usage", b.limit.cgroup_usage) ||
            !get(*it, "cgroup_anonymous", b.limit.cgroup_anonymous) || !get(*it, "oom_kills", b.limit.oom_kills) ||
            !get(*it, "swap_limit", b.limit.swap_limit))
            return fail(error_code::bad_value, "memory: limit is malformed");
        b.limit.cgroup_version = static_cast<int>(version.value_or(0));
        if (const auto pr = it->find("pressure"); pr != it->end()) {
            const auto number = [&](const char* key) -> std::optional<double> {
                const auto v = pr->find(key);
                return v != pr->end() && v->is_number() ? std::optional<double>(v->get<double>()) : std::nullopt;
            };
            const auto s10 = number("some_avg10"), s60 = number("some_avg60"), f10 = number("full_avg10"),
                       f60 = number("full_avg60");
            if (!pr->is_object() || !s10 || !s60 || !f10 || !f60 || !get_string(*pr, "source", b.limit.pressure_source))
                return fail(error_code::bad_value, "memory: limit.pressure is malformed");
            b.limit.pressure = memory_pressure{*s10, *s60, *f10, *f60};
        }
        if (const auto by = it->find("by_cgroup"); by != it->end()) {
            if (!by->is_boolean()) return fail(error_code::bad_value, "memory: limit.by_cgroup is no boolean");
            b.limit.by_cgroup = by->get<bool>();
        }
    }
    if (const auto it = j.find("parts"); it != j.end()) {
        if (!it->is_array()) return fail(error_code::bad_value, "memory: parts is no array");
        for (const memory_json& e : *it) {
            memory_part p;
            if (!e.is_object() || !get_string(e, "name", p.name) || !get(e, "resident", p.resident) ||
                !get(e, "committed", p.committed) || !get(e, "used", p.used) || !get(e, "count", p.count) ||
                !get_string(e, "source", p.source))
                return fail(error_code::bad_value, "memory: a part is malformed");
            b.parts.push_back(std::move(p));
        }
    }
    if (const auto it = j.find("nmt"); it != j.end()) {
        auto nmt = nmt_from_json(*it);
        if (!nmt) return std::unexpected(nmt.error());
        b.nmt = std::move(*nmt);
    }
    if (const auto it = j.find("notes"); it != j.end() && it->is_array())
        for (const memory_json& n : *it)
            if (n.is_string()) b.notes.push_back(n.get<std::string>());
    return b;
}

std::string rss_limit_cell(std::int64_t resident, std::optional<std::int64_t> limit, bool by_cgroup) {
    std::string cell = human_bytes(static_cast<std::uint64_t>(std::max<std::int64_t>(resident, 0)));
    if (!by_cgroup || !limit || *limit <= 0) return cell;
    return cell + "/" + human_bytes(static_cast<std::uint64_t>(*limit)) + " " +
           text::round_percent(100.0 * static_cast<double>(resident) / static_cast<double>(*limit));
}

std::string memory_text(const memory_breakdown& b) {
    std::string out = fmt("JVM %d: %s resident", static_cast<int>(b.pid),
                          human_bytes(static_cast<std::uint64_t>(b.resident)).c_str());
    if (const auto p = b.percent_of_limit())
        out += fmt(", %s of %s", text::percent_text(*p, 1).c_str(),
                   human_bytes(static_cast<std::uint64_t>(*b.limit.bytes)).c_str());
    out += " (" + terminal_safe(b.limit.source) + ")";
    if (b.swap > 0) out += ", " + human_bytes(static_cast<std::uint64_t>(b.swap)) + " swapped out";
    out += "\n";
    if (b.limit.cgroup_usage || b.limit.oom_kills) {
        out += "  the cgroup:";
        if (b.limit.cgroup_usage)
            out += " " + human_bytes(static_cast<std::uint64_t>(*b.limit.cgroup_usage)) + " charged";
        if (b.limit.oom_kills)
            out += fmt("%s %lld OOM kill(s) so far", b.limit.cgroup_usage ? "," : "",
                       static_cast<long long>(*b.limit.oom_kills));
        out += "\n";
    }
    if (const auto& pr = b.limit.pressure)
        out += fmt("  memory pressure (%s): some %.2f%% over 10 s, %.2f%% over 60 s; full %.2f%%, %.2f%%\n",
                   terminal_safe(b.limit.pressure_source).c_str(), pr->some_avg10, pr->some_avg60, pr->full_avg10,
                   pr->full_avg60);
    out += fmt("  %-20s %10s %10s %10s  %s\n", "part", "resident", "committed", "used", "measured from");
    for (const memory_part& p : b.parts) {
        std::string name = title_of(p.name);
        if (p.count) name += fmt(" (%lld)", static_cast<long long>(*p.count));
        out += fmt("  %-20s %10s %10s %10s  ", name.c_str(), cell(p.resident).c_str(), cell(p.committed).c_str(),
                   cell(p.used).c_str());
        out += terminal_safe(p.source) + "\n";
    }
    if (b.nmt) {
        out += fmt("Native Memory Tracking: %s committed of %s reserved\n",
                   human_bytes(static_cast<std::uint64_t>(b.nmt->committed)).c_str(),
                   human_bytes(static_cast<std::uint64_t>(b.nmt->reserved)).c_str());
        for (const nmt_category& c : b.nmt->categories)
            if (c.committed >= (1 << 20))
                out += fmt("  %-26s %10s\n", terminal_safe(c.name).c_str(),
                           human_bytes(static_cast<std::uint64_t>(c.committed)).c_str());
    }
    for (const std::string& n : b.notes) out += "  note: " + terminal_safe(n) + "\n";
    return out;
}

std::string largest_parts_text(const memory_breakdown& b, std::size_t n) {
    std::vector<const memory_part*> parts;
    for (const memory_part& p : b.parts)
        if (p.resident && *p.resident > 0) parts.push_back(&p);
    std::stable_sort(parts.begin(), parts.end(),
                     [](const memory_part* x, const memory_part* y) { return *x->resident > *y->resident; });
    std::string out;
    for (std::size_t i = 0; i < parts.size() && i < n; ++i)
        out += (i == 0 ? "" : ", ") + title_of(parts[i]->name) + " " + cell(parts[i]->resident);
    return out;
}

}  // namespace memory
}  // namespace heapd
