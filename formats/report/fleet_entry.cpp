#include "formats/report/fleet_entry.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <stdexcept>
#include <type_traits>

#include "base/keyed_hash.h"
#include "base/safe_text.h"
#include "formats/report/report_json.h"

namespace heapd {
inline namespace report {
namespace {

using json = nlohmann::ordered_json;

constexpr std::size_t max_text = 4096;
constexpr std::size_t max_suspects = 64;
constexpr std::int64_t max_time_ms = 253'402'300'799'999;  // 9999-12-31 23:59:59.999 UTC

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum(char c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Replaces each run of characters keep() accepts that follows marker with "*".
void star_after(std::string& name, std::string_view marker, bool (*keep)(char)) {
    for (std::size_t at = name.find(marker); at != std::string::npos; at = name.find(marker, at + 1)) {
        const std::size_t from = at + marker.size();
        std::size_t to = from;
        while (to < name.size() && keep(name[to])) ++to;
        if (to > from) name.replace(from, to - from, "*");
    }
}

// An array index step ("[12]") as any index ("[]").
std::string stable_field(std::string_view field) {
    if (field.size() >= 2 && field.front() == '[' && field.back() == ']') return "[]";
    return std::string(field);
}

}  // namespace

std::string stable_class_name(std::string_view name) {
    // Array dimensions stay as they are; the rules apply to the element's name.
    std::size_t dims = name.size();
    while (dims >= 2 && name.substr(dims - 2, 2) == "[]") dims -= 2;
    std::string out(name.substr(0, dims));
    const std::string_view suffix = name.substr(dims);
    // A hidden class's name ends in "/0x" and its address.
    if (const auto slash = out.find("/0x"); slash != std::string::npos) out.erase(slash);
    // Lambdas: "Foo$$Lambda$14" (JDK 17), "Foo$$Lambda" (JDK 21 and later, the address cut above).
    if (const auto lambda = out.find("$$Lambda"); lambda != std::string::npos)
        out.replace(lambda, std::string::npos, "$$Lambda*");
    star_after(out, "$Proxy", is_digit);
    star_after(out, "jdk.proxy", is_digit);
    for (std::string_view accessor :
         {"GeneratedMethodAccessor", "GeneratedConstructorAccessor", "GeneratedSerializationConstructorAccessor"})
        star_after(out, accessor, is_digit);
    for (std::string_view generated : {"$$EnhancerByCGLIB$$", "$$FastClassByCGLIB$$", "$$EnhancerBySpringCGLIB$$",
                                       "$$SpringCGLIB$$", "$HibernateProxy$", "$ByteBuddy$", "$MockitoMock$"})
        star_after(out, generated, is_alnum);
    return out + std::string(suffix);
}

namespace {

// "sticky_class: class Sessions.static LEAK → java.util.ArrayList.elementData → java.lang.Object[]":
// the root kinds (sorted) and each step's class and field, a chain of one class folded into one step.
std::string stable_path(const gc_path& path) {
    std::vector<std::string> kinds = path.root_kinds;
    std::sort(kinds.begin(), kinds.end());
    std::string out;
    for (const std::string& k : kinds) out += (out.empty() ? "" : ", ") + k;
    out += ":";
    std::string last;
    for (const path_step& step : path.steps) {
        std::string text = stable_class_name(step.class_name);
        if (!step.field.empty()) text += "." + stable_field(step.field);
        if (text == last) continue;  // a chain, however long
        out += (last.empty() ? " " : " → ") + text;
        last = std::move(text);
    }
    return out;
}

}  // namespace

std::string leak_signature(const leak_suspect& s) {
    return (s.is_class ? "instances of " : "object of ") + stable_class_name(s.suspect.class_name) +
           " | accumulates in " + stable_class_name(s.accumulation.class_name) + " | " + stable_path(s.path);
}

std::string leak_signature_id(std::string_view signature) {
    static constexpr hash_key key{'h', 'e', 'a', 'p', 'd', ' ', 'l', 'e', 'a', 'k', ' ', 's', 'i', 'g', 'n', '1'};
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(keyed_hash(key, signature)));
    return hex;
}

fleet_entry fleet_entry_of(const analysis_report& r, const fleet_context& c) {
    fleet_entry e;
    e.key = c.key;
    e.id = c.id;
    e.host = c.host;
    e.service = c.service;
    e.pid = c.pid;
    e.jvm_start_time = c.jvm_start_time;
    e.time_ms = c.created_ms != 0 ? c.created_ms : static_cast<std::int64_t>(r.summary.timestamp_ms);
    e.trigger = c.trigger;
    e.oom_kind = c.oom_kind;
    e.container = c.container;
    e.pod = c.pod;
    e.pod_namespace = c.pod_namespace;
    e.jvm = !c.jvm.empty() ? c.jvm : r.summary.java_version;
    e.reachable_bytes = r.retention.reachable_bytes;
    e.heap_bytes = r.summary.shallow_bytes;
    e.objects = r.summary.instances + r.summary.object_arrays + r.summary.primitive_arrays;
    for (const leak_suspect& s : r.retention.leak_suspects) {
        if (e.suspects.size() == max_suspects) break;
        fleet_suspect f;
        f.signature = leak_signature_id(leak_signature(s));
        f.class_name = stable_class_name(s.suspect.class_name);
        f.held_in = stable_class_name(s.accumulation.class_name);
        f.path = stable_path(s.path);
        f.is_class = s.is_class;
        f.retained_bytes = s.retained_bytes;
        f.share = s.share;
        e.suspects.push_back(std::move(f));
    }
    return e;
}

namespace {

// The sections of a report.json an entry needs, built from the parser's events as they come: the
// summary, reachability and leak suspects whole (within max_report_values values and
// max_object_keys keys an object), the sections report_from_json requires but an entry does not
// use as empty arrays, the rest never built. Nothing is built and then discarded (the parser's own
// callback does that, at a cost quadratic in an array's kept elements).
class report_sections final : public json::json_sax_t {
public:
    static constexpr std::size_t max_object_keys = 256;
    json root = json::object();

    bool null() override { return add(nullptr); }
    bool boolean(bool v) override { return add(v); }
    bool number_integer(number_integer_t v) override { return add(v); }
    bool number_unsigned(number_unsigned_t v) override { return add(v); }
    bool number_float(number_float_t v, const string_t&) override { return add(v); }
    bool string(string_t& v) override { return add(std::move(v)); }
    bool binary(binary_t&) override { return add(nullptr); }
    bool start_object(std::size_t) override { return open(json::object()); }
    bool start_array(std::size_t) override { return open(json::array()); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }
    bool key(string_t& k) override {
        if (skip_ > 0) return true;
        key_ = std::move(k);
        if (open_.size() == 1) section_ = section_of(key_);
        return true;
    }
    bool parse_error(std::size_t at, const std::string&, const nlohmann::detail::exception& e) override {
        throw std::invalid_argument("report JSON at byte " + std::to_string(at) + ": " + e.what());
    }

private:
    enum class part { whole, emptied, dropped };
    static part section_of(std::string_view name) {
        static constexpr std::array<std::string_view, 3> whole = {"summary", "reachability", "leak_suspects"};
        static constexpr std::array<std::string_view, 6> emptied = {"histogram",  "largest_objects",   "threads",
                                                                    "dominators", "retained_by_class", "problems"};
        if (std::find(whole.begin(), whole.end(), name) != whole.end()) return part::whole;
        if (std::find(emptied.begin(), emptied.end(), name) != emptied.end()) return part::emptied;
        return part::dropped;
    }
    // Whether a value starting now is kept; a top-level section not kept whole is said here.
    bool keeps() {
        if (skip_ > 0) return false;
        if (open_.size() == 1 && section_ != part::whole) {
            if (section_ == part::emptied) root[key_] = json::array();
            return false;
        }
        if (++kept_ > max_report_values)
            throw std::length_error("the report holds more than " + std::to_string(max_report_values) +
                                    " values in the sections a fleet reads");
        return true;
    }
    // The value v at its place in the innermost open container; v itself.
    json* place(json v) {
        json& parent = *open_.back();
        if (parent.is_array()) {
            parent.push_back(std::move(v));
            return &parent.back();
        }
        if (parent.size() >= max_object_keys && !parent.contains(key_))
            throw std::length_error("an object of the report has more than " + std::to_string(max_object_keys) +
                                    " keys");
        return &(parent[key_] = std::move(v));
    }
    bool add(json v) {
        if (open_.empty()) return true;  // a document that is no object: report_from_json refuses it
        if (keeps()) place(std::move(v));
        return true;
    }
    bool open(json empty) {
        if (open_.empty() && skip_ == 0) {
            open_.push_back(&root);  // the document: root is an object; an array is refused later
            if (!empty.is_object()) root = std::move(empty);
            return true;
        }
        if (!keeps()) {
            ++skip_;
            return true;
        }
        open_.push_back(place(std::move(empty)));
        return true;
    }
    bool close() {
        if (skip_ > 0)
            --skip_;
        else if (!open_.empty())
            open_.pop_back();
        return true;
    }

    std::vector<json*> open_;  // the containers being built, the document first
    std::size_t skip_ = 0;     // containers open inside a value not kept
    std::string key_;
    part section_ = part::dropped;
    std::size_t kept_ = 0;
};

}  // namespace

result<fleet_entry> fleet_entry_of_report(std::string_view text, const fleet_context& context) {
    report_sections sections;
    try {
        if (!json::sax_parse(text, &sections)) return fail(error_code::bad_value, "the report is not JSON");
    } catch (const std::exception& e) {  // the parser's, and the bounds'
        return fail(error_code::bad_value, e.what());
    }
    auto report = report_from_json(sections.root);
    if (!report) return std::unexpected(report.error());
    return fleet_entry_of(*report, context);
}

json to_json(const fleet_entry& e) {
    json suspects = json::array();
    for (const fleet_suspect& s : e.suspects)
        suspects.push_back({{"signature", s.signature},
                            {"class", s.class_name},
                            {"held_in", s.held_in},
                            {"path", s.path},
                            {"is_class", s.is_class},
                            {"retained_bytes", s.retained_bytes},
                            {"share", s.share}});
    return {{"fleet_entry", 1},
            {"key", e.key},
            {"id", e.id},
            {"host", e.host},
            {"service", e.service},
            {"pid", e.pid},
            {"jvm_start_time", e.jvm_start_time},
            {"time_ms", e.time_ms},
            {"trigger", e.trigger},
            {"oom_kind", e.oom_kind},
            {"container", e.container},
            {"pod", e.pod},
            {"namespace", e.pod_namespace},
            {"jvm", e.jvm},
            {"reachable_bytes", e.reachable_bytes},
            {"heap_bytes", e.heap_bytes},
            {"objects", e.objects},
            {"suspects", suspects}};
}

result<fleet_entry> fleet_entry_from_json(const json& j) {
    const char* at = "the summary";
    try {
        auto text = [&](const json& o, const char* name) {
            at = name;
            return std::string(utf8_prefix(o.at(name).get_ref<const std::string&>(), max_text));
        };
        // Whole numbers for whole fields (a float out of their range would make the conversion
        // undefined), booleans for flags.
        auto number = [&]<class T>(const json& o, const char* name, T) {
            at = name;
            const json& v = o.at(name);
            const bool fits = std::is_same_v<T, bool> ? v.is_boolean()
                              : std::is_integral_v<T> ? v.is_number_integer()
                                                      : v.is_number();
            if (!fits) throw nlohmann::json::type_error::create(302, "not of its type", &v);
            return v.get<T>();
        };
        if (!j.is_object()) return fail(error_code::bad_value, "a fleet summary is a JSON object");
        fleet_entry e;
        e.key = text(j, "key");
        e.id = text(j, "id");
        e.host = text(j, "host");
        e.service = text(j, "service");
        e.pid = number(j, "pid", std::int64_t{});
        e.jvm_start_time = number(j, "jvm_start_time", std::uint64_t{});
        // Times within years 1970 to 9999, so that differences and the page's scale cannot overflow.
        e.time_ms = std::clamp<std::int64_t>(number(j, "time_ms", std::int64_t{}), 0, max_time_ms);
        e.trigger = text(j, "trigger");
        e.oom_kind = text(j, "oom_kind");
        // Absent from summaries written before containers were named.
        for (auto [name, into] : {std::pair<const char*, std::string*>{"container", &e.container},
                                  {"pod", &e.pod},
                                  {"namespace", &e.pod_namespace}})
            if (j.contains(name)) *into = text(j, name);
        e.jvm = text(j, "jvm");
        e.reachable_bytes = number(j, "reachable_bytes", std::uint64_t{});
        e.heap_bytes = number(j, "heap_bytes", std::uint64_t{});
        e.objects = number(j, "objects", std::uint64_t{});
        at = "suspects";
        for (const json& s : j.at("suspects")) {
            if (e.suspects.size() == max_suspects) break;
            fleet_suspect f;
            f.signature = text(s, "signature");
            // What leak_signature_id makes, nothing else: it names findings and is printed as it is.
            if (f.signature.size() != 16 || f.signature.find_first_not_of("0123456789abcdef") != std::string::npos)
                return fail(error_code::bad_value,
                            "a fleet summary's suspect has a signature that is not 16 hex digits");
            f.class_name = text(s, "class");
            f.held_in = text(s, "held_in");
            f.path = text(s, "path");
            f.is_class = number(s, "is_class", bool{});
            f.retained_bytes = number(s, "retained_bytes", std::uint64_t{});
            f.share = number(s, "share", double{});
            e.suspects.push_back(std::move(f));
        }
        return e;
    } catch (const nlohmann::json::exception&) {
        return fail(error_code::bad_value,
                    std::string("a fleet summary's \"") + at + "\" is missing or not of its type");
    }
}

}  // namespace report
}  // namespace heapd
