#include "formats/sites/internal/answer_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <set>
#include <type_traits>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace heapd::sites::internal {
namespace {

using json = nlohmann::json;

// Where the reader is.
enum class place {
    answer,   // the answer's object
    classes,  // its "classes"
    methods,  // "methods" or "cpu_methods"
    method,   // one method
    sites,    // "sites"
    site,     // one site
    traces,   // "cpu_traces"
    trace,    // one CPU trace
    frames,   // a site's or a trace's "frames"
    frame,    // one [method, line]
    skipped,  // the value of a key this reader does not know, with all it holds
};

// One open object or array.
struct level {
    place where;
    std::string key;        // objects: the key whose value comes next
    std::size_t items = 0;  // arrays: entries so far
    unsigned seen = 0;      // objects: fields read, a bit each
    bool cpu = false;       // methods: the CPU samples' table
};

// One JSON value as it arrives.
struct value {
    enum kind { null, boolean, integer, count, number, text } k = null;
    bool b = false;
    std::int64_t i = 0;
    std::uint64_t u = 0;
    double d = 0;
    std::string* s = nullptr;
};

// A name cut to max_name_bytes (at a character's start), saying how long it was.
std::string capped(std::string name) {
    if (name.size() <= max_name_bytes) return name;
    std::size_t cut = max_name_bytes;
    while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;
    const std::size_t length = name.size();
    name.resize(cut);
    return name + "...(" + std::to_string(length) + " bytes)";
}

// The fields of a method, a site and a trace, a bit each, and which must be there.
constexpr const char* method_fields[] = {"class", "name", "descriptor", "file"};
constexpr const char* site_fields[] = {"class",   "frames", "samples",      "live_samples",
                                       "objects", "bytes",  "live_objects", "live_bytes"};
constexpr const char* trace_fields[] = {"frames", "count"};

// The answer's own fields (those beside its tables), each with the member it fills: its type says
// what the field must be (a count, an integer, a string, true or false, a number).
using profile_member =
    std::variant<std::uint64_t allocation_profile::*, std::int64_t allocation_profile::*, int allocation_profile::*,
                 std::string allocation_profile::*, bool allocation_profile::*, double allocation_profile::*>;
struct answer_field {
    const char* name;
    profile_member member;
};
const answer_field answer_fields[] = {
    {"protocol", &allocation_profile::protocol},
    {"agent", &allocation_profile::agent_version},
    {"command", &allocation_profile::command},
    {"error", &allocation_profile::error},
    {"sampling", &allocation_profile::sampling},
    {"interval", &allocation_profile::interval},
    {"depth", &allocation_profile::depth},
    {"seconds", &allocation_profile::seconds},
    {"dropped_ring", &allocation_profile::dropped_ring},
    {"memory_bytes", &allocation_profile::memory_bytes},
    {"cpu_sampling", &allocation_profile::cpu_sampling},
    {"cpu_period_ms", &allocation_profile::cpu_period_ms},
    {"cpu_seconds", &allocation_profile::cpu_seconds},
    {"samples", &allocation_profile::samples},
    {"dropped_sites", &allocation_profile::dropped_sites},
    {"dropped_live", &allocation_profile::dropped_live},
    {"dropped_unnamed", &allocation_profile::dropped_unnamed},
    {"cpu_depth", &allocation_profile::cpu_depth},
    {"cpu_ticks", &allocation_profile::cpu_ticks},
    {"cpu_samples", &allocation_profile::cpu_samples},
    {"cpu_dropped", &allocation_profile::cpu_dropped},
};

const answer_field* answer_field_named(const std::string& key) {
    for (const answer_field& f : answer_fields)
        if (key == f.name) return &f;
    return nullptr;
}

// What a field of that member's type must be, as its error says it.
const char* expected_of(const profile_member& m) {
    static const char* const what[] = {"a count", "an integer", "an integer", "a string", "true or false", "a number"};
    return what[m.index()];
}

template <std::size_t N>
int field_index(const char* const (&fields)[N], const std::string& key) {
    for (std::size_t i = 0; i < N; ++i)
        if (key == fields[i]) return static_cast<int>(i);
    return -1;
}

class reader final : public json::json_sax_t {
public:
    explicit reader(allocation_profile& p) : p_(p) {}
    const std::string& error() const { return error_; }
    const std::set<std::string>& seen() const { return seen_; }

    bool null() override { return scalar(value{}); }
    bool boolean(bool b) override { return scalar({value::boolean, b}); }
    bool number_integer(json::number_integer_t i) override { return scalar({value::integer, false, i}); }
    bool number_unsigned(json::number_unsigned_t u) override {
        return scalar({value::count, false, u <= INT64_MAX ? static_cast<std::int64_t>(u) : INT64_MAX, u});
    }
    bool number_float(json::number_float_t d, const json::string_t&) override {
        return scalar({value::number, false, 0, 0, d});
    }
    bool string(json::string_t& s) override { return scalar({value::text, false, 0, 0, 0, &s}); }
    bool binary(json::binary_t&) override { return fail("binary data"); }
    bool key(json::string_t& k) override {
        stack_.back().key = k;
        return true;
    }
    bool start_object(std::size_t) override { return open(true); }
    bool end_object() override { return close(); }
    bool start_array(std::size_t) override { return open(false); }
    bool end_array() override { return close(); }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
        if (error_.empty()) error_ = "it is not JSON";
        return false;
    }

private:
    bool fail(std::string what) {
        error_ = std::move(what);
        return false;
    }
    static std::string quoted(const std::string& key) { return "\"" + key + "\""; }

    // Room for an entry more in a table of that many, within max_entries.
    bool room(std::size_t entries, const char* name) {
        if (entries >= max_entries)
            return fail(quoted(name) + " holds more than " + std::to_string(max_entries) + " entries");
        return true;
    }

    bool open(bool object) {
        if (stack_.empty()) {
            if (!object) return fail("it is not a JSON object");
            stack_.push_back({place::answer, {}, 0, 0, false});
            return true;
        }
        level& up = stack_.back();
        switch (up.where) {
        case place::skipped: return push(place::skipped);
        case place::answer: return open_field(up, object);
        case place::classes: return fail("a class is not a string");
        case place::methods:
            if (!object) return fail("a method is not an object");
            if (!room((up.cpu ? p_.cpu_methods : p_.methods).size(), up.cpu ? "cpu_methods" : "methods")) return false;
            (up.cpu ? p_.cpu_methods : p_.methods).emplace_back();
            stack_.push_back({place::method, {}, 0, 0, up.cpu});
            return true;
        case place::sites:
            if (!object) return fail("a site is not an object");
            if (!room(p_.sites.size(), "sites")) return false;
            p_.sites.emplace_back();
            return push(place::site);
        case place::traces:
            if (!object) return fail("a CPU trace is not an object");
            if (!room(p_.cpu_traces.size(), "cpu_traces")) return false;
            p_.cpu_traces.emplace_back();
            return push(place::trace);
        case place::frames:
            if (object) return fail("a frame is not [method, line]");
            if (frames_->size() >= max_frames)
                return fail("\"frames\" holds more than " + std::to_string(max_frames) + " entries");
            frames_->push_back({0, 0});
            return push(place::frame);
        case place::frame: return fail("a frame is not [method, line]");
        case place::method:
            if (field_index(method_fields, up.key) >= 0) return fail(quoted(up.key) + " is not a string");
            return push(place::skipped);
        case place::site:
        case place::trace: {
            const bool site = up.where == place::site;
            if (up.key == "frames" && !object) {
                up.seen |= 1u << (site ? 1 : 0);
                frames_ = site ? &p_.sites.back().frames : &p_.cpu_traces.back().frames;
                return push(place::frames);
            }
            if ((site ? field_index(site_fields, up.key) : field_index(trace_fields, up.key)) >= 0)
                return fail(quoted(up.key) + " is not " + (up.key == "frames" ? "an array" : "a number"));
            return push(place::skipped);
        }
        }
        return false;
    }

    // An object or array as the value of one of the answer's own fields.
    bool open_field(level& up, bool object) {
        const std::string& k = up.key;
        const bool table = k == "classes" || k == "methods" || k == "sites" || k == "cpu_methods" || k == "cpu_traces";
        if (table) {
            if (object) return fail(quoted(k) + " is not an array");
            seen_.insert(k);
            const place where = k == "classes"      ? place::classes
                                : k == "sites"      ? place::sites
                                : k == "cpu_traces" ? place::traces
                                                    : place::methods;
            stack_.push_back({where, {}, 0, 0, k == "cpu_methods"});
            return true;
        }
        if (const answer_field* f = answer_field_named(k)) return fail(quoted(k) + " is not " + expected_of(f->member));
        return push(place::skipped);
    }

    bool push(place where) {
        stack_.push_back({where, {}, 0, 0, false});
        return true;
    }

    bool close() {
        const level done = stack_.back();
        stack_.pop_back();
        switch (done.where) {
        case place::frame:
            if (done.items != 2) return fail("a frame is not [method, line]");
            return true;
        case place::method:
            for (std::size_t i = 0; i < std::size(method_fields); ++i)
                if ((done.seen & (1u << i)) == 0) return fail(std::string("no \"") + method_fields[i] + "\"");
            return true;
        case place::site:
            for (std::size_t i = 0; i < std::size(site_fields); ++i)
                if ((done.seen & (1u << i)) == 0) return fail(std::string("no \"") + site_fields[i] + "\"");
            return true;
        case place::trace:
            for (std::size_t i = 0; i < std::size(trace_fields); ++i)
                if ((done.seen & (1u << i)) == 0) return fail(std::string("no \"") + trace_fields[i] + "\"");
            return true;
        default: return true;
        }
    }

    // The checks of each kind of field, with the messages the document reader gave.
    bool as_count(const value& v, const std::string& key, std::uint64_t& out) {
        if (v.k != value::count) return fail(quoted(key) + " is not a count");
        out = v.u;
        return true;
    }
    bool as_integer(const value& v, const std::string& key, std::int64_t& out) {
        if (v.k != value::count && v.k != value::integer) return fail(quoted(key) + " is not an integer");
        out = v.i;
        return true;
    }
    bool as_estimate(const value& v, const std::string& key, double& out) {
        if (v.k != value::count && v.k != value::integer && v.k != value::number)
            return fail(quoted(key) + " is not a number");
        out = v.k == value::number ? v.d : v.k == value::count ? static_cast<double>(v.u) : static_cast<double>(v.i);
        if (!std::isfinite(out) || out < 0) return fail(quoted(key) + " is not a non-negative number");
        return true;
    }
    bool as_text(const value& v, const std::string& key, std::string& out) {
        if (v.k != value::text) return fail(quoted(key) + " is not a string");
        out = capped(std::move(*v.s));
        return true;
    }
    bool as_flag(const value& v, const std::string& key, bool& out) {
        if (v.k != value::boolean) return fail(quoted(key) + " is not true or false");
        out = v.b;
        return true;
    }

    bool scalar(const value& v) {
        if (stack_.empty()) return fail("it is not a JSON object");
        level& l = stack_.back();
        switch (l.where) {
        case place::skipped: return true;
        case place::answer: return top_field(l.key, v);
        case place::classes:
            if (v.k != value::text) return fail("a class is not a string");
            if (!room(p_.classes.size(), "classes")) return false;
            p_.classes.push_back(capped(java_type_name(*v.s)));
            return true;
        case place::methods: return fail("a method is not an object");
        case place::sites: return fail("a site is not an object");
        case place::traces: return fail("a CPU trace is not an object");
        case place::frames: return fail("a frame is not [method, line]");
        case place::frame: return frame_part(l, v);
        case place::method: return method_field(l, v);
        case place::site: return site_field(l, v);
        case place::trace: return trace_field(l, v);
        }
        return false;
    }

    bool top_field(const std::string& k, const value& v) {
        const answer_field* f = answer_field_named(k);
        if (f == nullptr) return true;
        seen_.insert(k);
        return std::visit(
            [&](auto member) -> bool {
                auto& out = p_.*member;
                using type = std::remove_reference_t<decltype(out)>;
                if constexpr (std::is_same_v<type, std::uint64_t>) {
                    return as_count(v, k, out);
                } else if constexpr (std::is_same_v<type, std::string>) {
                    return as_text(v, k, out);
                } else if constexpr (std::is_same_v<type, bool>) {
                    return as_flag(v, k, out);
                } else if constexpr (std::is_same_v<type, double>) {
                    return as_estimate(v, k, out);
                } else {  // an integer, kept in an int where the profile has one
                    std::int64_t i = 0;
                    if (!as_integer(v, k, i)) return false;
                    out = static_cast<type>(std::clamp<std::int64_t>(i, std::numeric_limits<type>::min(),
                                                                     std::numeric_limits<type>::max()));
                    return true;
                }
            },
            f->member);
    }

    bool method_field(level& l, const value& v) {
        const int at = field_index(method_fields, l.key);
        if (at < 0) return true;
        l.seen |= 1u << at;
        profile_method& m = (l.cpu ? p_.cpu_methods : p_.methods).back();
        std::string* fields[] = {&m.klass, &m.name, &m.descriptor, &m.file};
        if (!as_text(v, l.key, *fields[at])) return false;
        if (at == 0) m.klass = capped(java_type_name(m.klass));
        return true;
    }

    bool site_field(level& l, const value& v) {
        const int at = field_index(site_fields, l.key);
        if (at < 0) return true;
        if (at == 1) return fail("\"frames\" is not an array");
        l.seen |= 1u << at;
        profile_site& s = p_.sites.back();
        switch (at) {
        case 0: {
            std::uint64_t klass = 0;
            if (!as_count(v, l.key, klass)) return false;
            if (klass >= max_entries) return fail("a site's class " + std::to_string(klass) + " is not listed");
            s.klass = static_cast<std::uint32_t>(klass);
            return true;
        }
        case 2: return as_count(v, l.key, s.samples);
        case 3: return as_count(v, l.key, s.live_samples);
        case 4: return as_estimate(v, l.key, s.objects);
        case 5: return as_estimate(v, l.key, s.bytes);
        case 6: return as_estimate(v, l.key, s.live_objects);
        default: return as_estimate(v, l.key, s.live_bytes);
        }
    }

    bool trace_field(level& l, const value& v) {
        const int at = field_index(trace_fields, l.key);
        if (at < 0) return true;
        if (at == 0) return fail("\"frames\" is not an array");
        l.seen |= 1u << at;
        return as_count(v, l.key, p_.cpu_traces.back().count);
    }

    bool frame_part(level& l, const value& v) {
        profile_frame& f = frames_->back();
        if (l.items == 0) {
            if (v.k != value::count) return fail("a frame is not [method, line]");
            if (v.u >= max_entries) return fail("a frame's method " + std::to_string(v.u) + " is not listed");
            f.method = static_cast<std::uint32_t>(v.u);
        } else if (l.items == 1) {
            if (v.k != value::count && v.k != value::integer) return fail("a frame is not [method, line]");
            if (v.i < -2 || v.i > INT32_MAX) return fail("a frame's line " + std::to_string(v.i) + " is out of range");
            f.line = static_cast<std::int32_t>(v.i);
        } else {
            return fail("a frame is not [method, line]");
        }
        ++l.items;
        return true;
    }

    allocation_profile& p_;
    std::vector<level> stack_;
    std::vector<profile_frame>* frames_ = nullptr;
    std::set<std::string> seen_;
    std::string error_;
};

// What needs the whole answer: the fields that must be there, and every index against its table.
std::optional<std::string> missing_or_unlisted(const allocation_profile& p, const std::set<std::string>& seen) {
    std::vector<const char*> required = {"command", "error",   "sampling",     "interval",
                                         "depth",   "seconds", "dropped_ring", "memory_bytes"};
    if (seen.contains("cpu_sampling")) required.insert(required.end(), {"cpu_period_ms", "cpu_seconds"});
    if (p.has_tables)
        required.insert(required.end(),
                        {"samples", "dropped_sites", "dropped_live", "dropped_unnamed", "classes", "methods"});
    if (p.has_cpu)
        required.insert(required.end(), {"cpu_depth", "cpu_ticks", "cpu_samples", "cpu_dropped", "cpu_methods"});
    for (const char* key : required)
        if (!seen.contains(key)) return std::string("no \"") + key + "\"";
    for (const profile_site& s : p.sites) {
        if (s.klass >= p.classes.size()) return "a site's class " + std::to_string(s.klass) + " is not listed";
        for (const profile_frame& f : s.frames)
            if (f.method >= p.methods.size()) return "a frame's method " + std::to_string(f.method) + " is not listed";
    }
    for (const cpu_trace_entry& t : p.cpu_traces)
        for (const profile_frame& f : t.frames)
            if (f.method >= p.cpu_methods.size())
                return "a frame's method " + std::to_string(f.method) + " is not listed";
    return std::nullopt;
}

}  // namespace

result<allocation_profile> read_answer(std::string_view text) {
    allocation_profile p;
    reader r(p);
    const bool read = json::sax_parse(text, &r);
    const auto& seen = r.seen();
    // Another protocol's answer is said to be so, whatever else is wrong with it.
    if (seen.contains("protocol") && seen.contains("agent") && p.protocol != agent_protocol)
        return fail(error_code::protocol, "the agent (" + p.agent_version + ") speaks protocol " +
                                              std::to_string(p.protocol) + ", heapd " + std::to_string(agent_protocol));
    if (!read) {
        if (r.error() == "it is not JSON" || r.error() == "it is not a JSON object")
            return fail(error_code::bad_value, "the agent's answer is not a JSON object");
        return fail(error_code::bad_value, "the agent's answer: " + r.error());
    }
    for (const char* key : {"protocol", "agent"})
        if (!seen.contains(key))
            return fail(error_code::bad_value, std::string("the agent's answer: no \"") + key + "\"");
    p.has_tables = seen.contains("sites");
    p.has_cpu = seen.contains("cpu_traces");
    if (auto wrong = missing_or_unlisted(p, seen)) return fail(error_code::bad_value, "the agent's answer: " + *wrong);
    return p;
}

}  // namespace heapd::sites::internal
