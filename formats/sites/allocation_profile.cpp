#include "formats/sites/allocation_profile.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "formats/hprof/java_names.h"

namespace heapd::sites {
namespace {

using json = nlohmann::json;

// Thrown inside this file only, for a field that is not what it must be; turned into bad_value.
struct bad_field {
    std::string what;
};

const json& field(const json& object, const char* key) {
    auto it = object.find(key);
    if (it == object.end()) throw bad_field{std::string("no \"") + key + "\""};
    return *it;
}

std::string text_of(const json& object, const char* key) {
    const json& v = field(object, key);
    if (!v.is_string()) throw bad_field{std::string("\"") + key + "\" is not a string"};
    return v.get<std::string>();
}

std::uint64_t count_of(const json& object, const char* key) {
    const json& v = field(object, key);
    if (!v.is_number_unsigned()) throw bad_field{std::string("\"") + key + "\" is not a count"};
    return v.get<std::uint64_t>();
}

std::int64_t integer_of(const json& object, const char* key) {
    const json& v = field(object, key);
    if (!v.is_number_integer()) throw bad_field{std::string("\"") + key + "\" is not an integer"};
    return v.get<std::int64_t>();
}

// A finite, non-negative estimate.
double estimate_of(const json& object, const char* key) {
    const json& v = field(object, key);
    if (!v.is_number()) throw bad_field{std::string("\"") + key + "\" is not a number"};
    double d = v.get<double>();
    if (!std::isfinite(d) || d < 0) throw bad_field{std::string("\"") + key + "\" is not a non-negative number"};
    return d;
}

const json& array_of(const json& object, const char* key, std::size_t max) {
    const json& v = field(object, key);
    if (!v.is_array()) throw bad_field{std::string("\"") + key + "\" is not an array"};
    if (v.size() > max)
        throw bad_field{std::string("\"") + key + "\" holds " + std::to_string(v.size()) + " entries, more than " +
                        std::to_string(max)};
    return v;
}

// A name cut to max_name_bytes (at a character's start), saying how long it was.
std::string capped(std::string name) {
    if (name.size() <= max_name_bytes) return name;
    std::size_t cut = max_name_bytes;
    while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;
    const std::size_t length = name.size();
    name.resize(cut);
    return name + "...(" + std::to_string(length) + " bytes)";
}

std::string name_of(const json& object, const char* key) { return capped(text_of(object, key)); }

profile_method method_of(const json& m) {
    if (!m.is_object()) throw bad_field{"a method is not an object"};
    return {capped(java_type_name(text_of(m, "class"))), name_of(m, "name"), name_of(m, "descriptor"),
            name_of(m, "file")};
}

std::vector<profile_frame> frames_of(const json& s, std::size_t methods) {
    std::vector<profile_frame> out;
    for (const json& f : array_of(s, "frames", max_frames)) {
        if (!f.is_array() || f.size() != 2 || !f[0].is_number_unsigned() || !f[1].is_number_integer())
            throw bad_field{"a frame is not [method, line]"};
        std::uint64_t method = f[0].get<std::uint64_t>();
        std::int64_t line = f[1].get<std::int64_t>();
        if (method >= methods) throw bad_field{"a frame's method " + std::to_string(method) + " is not listed"};
        if (line < -2 || line > INT32_MAX)
            throw bad_field{"a frame's line " + std::to_string(line) + " is out of range"};
        out.push_back({static_cast<std::uint32_t>(method), static_cast<std::int32_t>(line)});
    }
    return out;
}

void read_cpu(const json& j, allocation_profile& p) {
    p.has_cpu = true;
    p.cpu_depth = static_cast<int>(integer_of(j, "cpu_depth"));
    p.cpu_ticks = count_of(j, "cpu_ticks");
    p.cpu_samples = count_of(j, "cpu_samples");
    p.cpu_dropped = count_of(j, "cpu_dropped");
    for (const json& m : array_of(j, "cpu_methods", max_entries)) p.cpu_methods.push_back(method_of(m));
    for (const json& t : array_of(j, "cpu_traces", max_entries)) {
        if (!t.is_object()) throw bad_field{"a CPU trace is not an object"};
        p.cpu_traces.push_back({frames_of(t, p.cpu_methods.size()), count_of(t, "count")});
    }
}

void read_tables(const json& j, allocation_profile& p) {
    p.has_tables = true;
    p.samples = count_of(j, "samples");
    p.dropped_sites = count_of(j, "dropped_sites");
    p.dropped_live = count_of(j, "dropped_live");
    p.dropped_unnamed = count_of(j, "dropped_unnamed");
    for (const json& c : array_of(j, "classes", max_entries)) {
        if (!c.is_string()) throw bad_field{"a class is not a string"};
        p.classes.push_back(capped(java_type_name(c.get<std::string>())));
    }
    for (const json& m : array_of(j, "methods", max_entries)) p.methods.push_back(method_of(m));
    for (const json& s : array_of(j, "sites", max_entries)) {
        if (!s.is_object()) throw bad_field{"a site is not an object"};
        profile_site site;
        std::uint64_t klass = count_of(s, "class");
        if (klass >= p.classes.size()) throw bad_field{"a site's class " + std::to_string(klass) + " is not listed"};
        site.klass = static_cast<std::uint32_t>(klass);
        site.frames = frames_of(s, p.methods.size());
        site.samples = count_of(s, "samples");
        site.live_samples = count_of(s, "live_samples");
        site.objects = estimate_of(s, "objects");
        site.bytes = estimate_of(s, "bytes");
        site.live_objects = estimate_of(s, "live_objects");
        site.live_bytes = estimate_of(s, "live_bytes");
        p.sites.push_back(std::move(site));
    }
}

}  // namespace

std::string java_type_name(std::string_view signature) {
    if (signature.size() >= 2 && signature.front() == 'L' && signature.back() == ';')
        signature = signature.substr(1, signature.size() - 2);
    return java_class_name(signature);
}

result<allocation_profile> parse_allocation_profile(std::string_view text) {
    if (text.size() > max_answer_bytes)
        return fail(error_code::bad_value, "the agent's answer is " + std::to_string(text.size()) +
                                               " bytes, more than the " + std::to_string(max_answer_bytes) +
                                               " allowed");
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return fail(error_code::bad_value, "the agent's answer is not a JSON object");
    allocation_profile p;
    try {
        p.protocol = static_cast<int>(integer_of(j, "protocol"));
        p.agent_version = name_of(j, "agent");
        if (p.protocol != agent_protocol)
            return fail(error_code::protocol, "the agent (" + p.agent_version + ") speaks protocol " +
                                                  std::to_string(p.protocol) + ", heapd " +
                                                  std::to_string(agent_protocol));
        p.command = name_of(j, "command");
        p.error = name_of(j, "error");
        const json& sampling = field(j, "sampling");
        if (!sampling.is_boolean()) throw bad_field{"\"sampling\" is not true or false"};
        p.sampling = sampling.get<bool>();
        p.interval = integer_of(j, "interval");
        p.depth = static_cast<int>(integer_of(j, "depth"));
        p.seconds = estimate_of(j, "seconds");
        p.dropped_ring = count_of(j, "dropped_ring");
        p.memory_bytes = count_of(j, "memory_bytes");
        if (j.contains("cpu_sampling")) {
            const json& cpu = field(j, "cpu_sampling");
            if (!cpu.is_boolean()) throw bad_field{"\"cpu_sampling\" is not true or false"};
            p.cpu_sampling = cpu.get<bool>();
            p.cpu_period_ms = static_cast<int>(integer_of(j, "cpu_period_ms"));
            p.cpu_seconds = estimate_of(j, "cpu_seconds");
        }
        if (j.contains("sites")) read_tables(j, p);
        if (j.contains("cpu_traces")) read_cpu(j, p);
    } catch (const bad_field& e) {
        return fail(error_code::bad_value, "the agent's answer: " + e.what);
    }
    return p;
}

}  // namespace heapd::sites
