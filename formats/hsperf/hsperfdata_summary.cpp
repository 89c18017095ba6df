#include "formats/hsperf/hsperfdata_summary.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>

#include "base/safe_text.h"

namespace heapd {
inline namespace hsperf {
namespace {

// The highest generation, space and collector index read: HotSpot has at most 3 generations of 4
// spaces and 4 collectors; a file made with thousands would make every listing of it big.
constexpr int max_counter_index = 15;
// The most bytes of a generation's, space's or collector's name kept ("G1 young collection pauses").
constexpr std::size_t max_name_bytes = 256;

// Splits "12.rest" into 12 and "rest"; nothing unless it starts with a small decimal index and a dot.
std::optional<std::pair<int, std::string_view>> indexed(std::string_view s) {
    int index = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), index);
    if (ec != std::errc{} || end == s.data() || index < 0 || index > max_counter_index) return std::nullopt;
    std::size_t used = static_cast<std::size_t>(end - s.data());
    if (used >= s.size() || s[used] != '.') return std::nullopt;
    return std::pair{index, s.substr(used + 1)};
}

// a + b, held at the int64 limits: counters of a damaged file may hold any value.
std::int64_t add(std::int64_t a, std::int64_t b) {
    std::int64_t r = 0;
    if (!__builtin_add_overflow(a, b, &r)) return r;
    return b > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
}

std::string name_text(const hsperf_entry& e) {
    return std::string(utf8_prefix(e.string_value().value_or(""), max_name_bytes));
}
std::int64_t number(const hsperf_entry& e) { return e.long_value().value_or(0); }

// sun.gc.generation.N.{name,capacity,maxCapacity} and sun.gc.generation.N.space.M.{name,used,capacity,maxCapacity}.
std::vector<hsperf_generation> read_generations(const hsperf_snapshot& s) {
    constexpr std::string_view prefix = "sun.gc.generation.";
    std::map<int, hsperf_generation> gens;
    std::map<std::pair<int, int>, hsperf_space> spaces;
    for (const hsperf_entry& e : s.with_prefix(prefix)) {
        auto g = indexed(e.name.substr(prefix.size()));
        if (!g) continue;
        auto [gi, field] = *g;
        hsperf_generation& gen = gens[gi];
        gen.index = gi;
        if (field == "name")
            gen.name = name_text(e);
        else if (field == "capacity")
            gen.capacity = number(e);
        else if (field == "maxCapacity")
            gen.max_capacity = number(e);
        else if (field.starts_with("space.")) {
            auto sp = indexed(field.substr(6));
            if (!sp) continue;
            auto [si, sfield] = *sp;
            hsperf_space& space = spaces[{gi, si}];
            space.index = si;
            if (sfield == "name")
                space.name = name_text(e);
            else if (sfield == "used")
                space.used = number(e);
            else if (sfield == "capacity")
                space.capacity = number(e);
            else if (sfield == "maxCapacity")
                space.max_capacity = number(e);
        }
    }
    for (auto& [key, space] : spaces) gens[key.first].spaces.push_back(std::move(space));
    std::vector<hsperf_generation> out;
    for (auto& [index, gen] : gens) {
        gen.index = index;
        out.push_back(std::move(gen));
    }
    return out;
}

std::vector<hsperf_collector> read_collectors(const hsperf_snapshot& s) {
    constexpr std::string_view prefix = "sun.gc.collector.";
    std::map<int, hsperf_collector> found;
    for (const hsperf_entry& e : s.with_prefix(prefix)) {
        auto c = indexed(e.name.substr(prefix.size()));
        if (!c) continue;
        auto [ci, field] = *c;
        hsperf_collector& col = found[ci];
        col.index = ci;
        if (field == "name")
            col.name = name_text(e);
        else if (field == "invocations")
            col.invocations = number(e);
        else if (field == "time")
            col.ticks = number(e);
    }
    std::vector<hsperf_collector> out;
    for (auto& [index, col] : found) out.push_back(std::move(col));
    return out;
}

// Whitespace-separated words.
std::vector<std::string_view> words(std::string_view s) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && s[i] == ' ') ++i;
        std::size_t j = i;
        while (j < s.size() && s[j] != ' ') ++j;
        if (j > i) out.push_back(s.substr(i, j - i));
        i = j;
    }
    return out;
}

// A boolean flag's setting in one word: "-XX:+Name", "-XX:-Name", "+Name", "Name=true", ...
std::optional<bool> bool_setting(std::string_view word, std::string_view flag) {
    if (word.starts_with("-XX:")) word.remove_prefix(4);
    if (word.size() == flag.size() + 1 && (word[0] == '+' || word[0] == '-') && word.substr(1) == flag)
        return word[0] == '+';
    if (word.starts_with(flag) && word.size() > flag.size() && word[flag.size()] == '=') {
        std::string_view v = word.substr(flag.size() + 1);
        if (v == "true" || v == "1") return true;
        if (v == "false" || v == "0") return false;
    }
    return std::nullopt;
}

// Where a value that started at from ends: at the next " -X", " -D", " --", agent or assertion option.
std::size_t value_end(std::string_view args, std::size_t from) {
    static constexpr std::string_view starts[] = {
        " -X",  " -D",  " --",   " -javaagent:", " -agentlib:",        " -agentpath:",        " -verbose",
        " -ea", " -da", " -esa", " -dsa",        " -enableassertions", " -disableassertions", " -Xbootclasspath"};
    std::size_t end = args.size();
    for (auto s : starts) end = std::min(end, args.find(s, from));
    return end;
}

// Every value of "-XX:Name=value" (or "Name=value" in the flags file) in args, in order. A value of
// the flags file ends at a space; one of the arguments may hold spaces (see value_end).
std::vector<std::string> values_of(std::string_view args, std::string_view flag, bool flags_file) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    while ((pos = args.find(flag, pos)) != std::string_view::npos) {
        std::size_t after = pos + flag.size();
        bool starts_word = pos == 0 || args[pos - 1] == ' ' ||
                           (pos >= 4 && args.substr(pos - 4, 4) == "-XX:" && (pos == 4 || args[pos - 5] == ' '));
        if (starts_word && after < args.size() && args[after] == '=') {
            std::size_t end = flags_file ? std::min(args.size(), args.find(' ', after)) : value_end(args, after + 1);
            out.emplace_back(args.substr(after + 1, end - after - 1));
            pos = end;
        } else {
            pos = after;
        }
    }
    return out;
}

}  // namespace

std::int64_t hsperf_generation::used() const {
    std::int64_t sum = 0;
    for (const auto& s : spaces) sum = add(sum, s.used);
    return sum;
}

std::optional<double> hsperf_heap_usage::occupancy() const {
    if (max_capacity > 0) return static_cast<double>(used) / static_cast<double>(max_capacity);
    if (capacity > 0) return static_cast<double>(used) / static_cast<double>(capacity);
    return std::nullopt;
}

oom_settings parse_oom_settings(std::string_view vm_flags, std::string_view vm_args) {
    oom_settings o;
    const std::pair<std::string_view, bool> sources[] = {{vm_flags, true}, {vm_args, false}};
    for (auto [args, flags_file] : sources) {
        for (std::string_view w : words(args)) {
            if (auto v = bool_setting(w, "HeapDumpOnOutOfMemoryError")) o.heap_dump = *v;
            if (auto v = bool_setting(w, "ExitOnOutOfMemoryError")) o.exit = *v;
            if (auto v = bool_setting(w, "CrashOnOutOfMemoryError")) o.crash = *v;
        }
        for (auto& v : values_of(args, "HeapDumpPath", flags_file)) o.heap_dump_path = v;
        for (auto& v : values_of(args, "OnOutOfMemoryError", flags_file)) {
            if (v.empty()) continue;
            o.on_error += o.on_error.empty() ? v : "; " + v;
        }
    }
    return o;
}

jvm_perf_summary summarize(const hsperf_snapshot& s, bool accessible) {
    jvm_perf_summary r;
    r.accessible = accessible;
    r.complete = s.complete();
    auto str = [&](std::string_view name) {
        return std::string(utf8_prefix(s.string_value(name).value_or(""), max_summary_text));
    };
    r.command = str("sun.rt.javaCommand");
    r.main_class = r.command.substr(0, r.command.find(' '));
    r.vm_version = str("java.property.java.vm.version");
    if (r.vm_version.empty()) r.vm_version = str("java.vm.version");
    r.vm_flags = str("java.rt.vmFlags");
    r.vm_args = str("java.rt.vmArgs");
    r.gc_policy = str("sun.gc.policy.name");
    r.last_cause = str("sun.gc.lastCause");
    r.hrt_frequency = s.long_value("sun.os.hrt.frequency").value_or(0);
    r.hrt_ticks = s.long_value("sun.os.hrt.ticks").value_or(0);
    r.create_vm_begin_ms = s.long_value("sun.rt.createVmBeginTime").value_or(0);
    r.generations = read_generations(s);
    r.collectors = read_collectors(s);

    const double hz = static_cast<double>(r.hrt_frequency);
    for (auto& c : r.collectors) {
        c.seconds = hz > 0 ? static_cast<double>(c.ticks) / hz : 0;
        r.gc_ticks = add(r.gc_ticks, c.ticks);
    }
    if (hz > 0) {
        r.gc_seconds = static_cast<double>(r.gc_ticks) / hz;
        r.uptime_seconds = static_cast<double>(r.hrt_ticks) / hz;
    }
    if (r.hrt_ticks > 0) r.gc_time_share = static_cast<double>(r.gc_ticks) / static_cast<double>(r.hrt_ticks);

    // G1's generations each may grow to the whole heap, so its maximum is the old generation's;
    // the other collectors split the heap between their generations.
    const bool shared_max = r.gc_policy == "GarbageFirst";
    for (const auto& g : r.generations) {
        r.heap.used = add(r.heap.used, g.used());
        r.heap.capacity = add(r.heap.capacity, g.capacity);
        r.heap.max_capacity =
            shared_max ? std::max(r.heap.max_capacity, g.max_capacity) : add(r.heap.max_capacity, g.max_capacity);
        if (g.index == 1) r.old_gen = hsperf_heap_usage{g.used(), g.capacity, g.max_capacity};
    }
    if (shared_max && r.old_gen) r.heap.max_capacity = r.old_gen->max_capacity;
    r.oom = parse_oom_settings(r.vm_flags, r.vm_args);
    return r;
}

result<jvm_perf_summary> summarize(const hsperf_data& data) {
    const bool accessible = data.prologue().accessible;
    auto snap = data.snapshot();
    if (!snap) return std::unexpected(snap.error());
    return summarize(*snap, accessible);
}

}  // namespace hsperf
}  // namespace heapd
