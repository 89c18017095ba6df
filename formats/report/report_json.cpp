#include "formats/report/report_json.h"

#include <cmath>

#include "formats/report/report_text.h"

namespace heapd {
inline namespace report {
namespace {

using json = nlohmann::ordered_json;

json pairs_object(const std::vector<std::pair<std::string, std::uint64_t>>& pairs) {
    json o = json::object();
    for (const auto& [k, v] : pairs) o[k] = v;
    return o;
}

std::vector<std::pair<std::string, std::uint64_t>> object_pairs(const json& o) {
    std::vector<std::pair<std::string, std::uint64_t>> out;
    for (auto it = o.begin(); it != o.end(); ++it) out.emplace_back(it.key(), it.value().get<std::uint64_t>());
    return out;
}

json legacy_json(const legacy_report& l) {
    json j = json::object();
    if (!l.alloc_sites.empty()) {
        json sites = json::array();
        for (const auto& s : l.alloc_sites)
            sites.push_back({{"class", s.class_name},
                             {"trace", s.trace_serial},
                             {"live_bytes", s.live_bytes},
                             {"live_instances", s.live_instances},
                             {"allocated_bytes", s.allocated_bytes},
                             {"allocated_instances", s.allocated_instances}});
        j["alloc_sites"] = {{"total_live_bytes", l.sites_total_live_bytes},
                            {"total_live_instances", l.sites_total_live_instances},
                            {"sites", sites}};
    }
    if (!l.cpu_samples.empty()) {
        json traces = json::array();
        for (const auto& [n, frame] : l.cpu_samples) traces.push_back({{"samples", n}, {"top_frame", frame}});
        j["cpu_samples"] = {{"total", l.cpu_total_samples}, {"traces", traces}};
    }
    if (l.heap_summary_live)
        j["heap_summary"] = {{"live_bytes", l.heap_summary_live->first},
                             {"live_instances", l.heap_summary_live->second},
                             {"allocated_bytes", l.heap_summary_allocated->first},
                             {"allocated_instances", l.heap_summary_allocated->second}};
    if (l.control_flags) j["control_settings"] = {{"flags", *l.control_flags}, {"stack_depth", *l.control_stack_depth}};
    return j;
}

void legacy_from_json(const json& j, legacy_report& l) {
    if (j.contains("alloc_sites")) {
        const json& a = j.at("alloc_sites");
        l.sites_total_live_bytes = a.at("total_live_bytes").get<std::uint64_t>();
        l.sites_total_live_instances = a.at("total_live_instances").get<std::uint64_t>();
        for (const json& s : a.at("sites"))
            l.alloc_sites.push_back(
                {s.at("class").get<std::string>(), s.at("trace").get<std::uint32_t>(),
                 s.at("live_bytes").get<std::uint64_t>(), s.at("live_instances").get<std::uint64_t>(),
                 s.at("allocated_bytes").get<std::uint64_t>(), s.at("allocated_instances").get<std::uint64_t>()});
    }
    if (j.contains("cpu_samples")) {
        l.cpu_total_samples = j.at("cpu_samples").at("total").get<std::uint64_t>();
        for (const json& t : j.at("cpu_samples").at("traces"))
            l.cpu_samples.emplace_back(t.at("samples").get<std::uint64_t>(), t.at("top_frame").get<std::string>());
    }
    if (j.contains("heap_summary")) {
        const json& h = j.at("heap_summary");
        l.heap_summary_live = {h.at("live_bytes").get<std::uint64_t>(), h.at("live_instances").get<std::uint64_t>()};
        l.heap_summary_allocated = {h.at("allocated_bytes").get<std::uint64_t>(),
                                    h.at("allocated_instances").get<std::uint64_t>()};
    }
    if (j.contains("control_settings")) {
        l.control_flags = j.at("control_settings").at("flags").get<std::uint32_t>();
        l.control_stack_depth = j.at("control_settings").at("stack_depth").get<std::uint32_t>();
    }
}

json waste_json(const waste_report& w) {
    json top = json::array(), collections = json::array(), boxed = json::array(), zeros = json::array();
    for (const auto& d : w.duplicate_strings_top)
        top.push_back(
            {{"content", d.content}, {"length", d.length}, {"copies", d.copies}, {"saving_bytes", d.saving_bytes}});
    for (const auto& c : w.collections)
        collections.push_back({{"class", c.class_name},
                               {"count", c.count},
                               {"empty", c.empty},
                               {"sparse", c.sparse},
                               {"saving_bytes", c.saving_bytes}});
    for (const auto& b : w.boxed)
        boxed.push_back({{"class", b.class_name},
                         {"count", b.count},
                         {"bytes", b.bytes},
                         {"distinct_values", b.distinct_values},
                         {"saving_bytes", b.saving_bytes}});
    for (const auto& z : w.zero_arrays)
        zeros.push_back({{"class", z.class_name}, {"count", z.count}, {"bytes", z.bytes}});
    return {{"saving_bytes", w.saving_bytes},
            {"duplicate_strings",
             {{"groups", w.duplicate_string_groups},
              {"strings", w.duplicate_strings},
              {"saving_bytes", w.duplicate_string_saving},
              {"top", top}}},
            {"collections", {{"saving_bytes", w.collection_saving}, {"classes", collections}}},
            {"boxed", {{"saving_bytes", w.boxed_saving}, {"classes", boxed}}},
            {"zero_arrays", {{"saving_bytes", w.zero_array_saving}, {"types", zeros}}}};
}

void waste_from_json(const json& j, waste_report& w) {
    auto u64 = [](const json& o, const char* key) { return o.at(key).get<std::uint64_t>(); };
    w.computed = true;
    w.saving_bytes = u64(j, "saving_bytes");
    const json& d = j.at("duplicate_strings");
    w.duplicate_string_groups = u64(d, "groups");
    w.duplicate_strings = u64(d, "strings");
    w.duplicate_string_saving = u64(d, "saving_bytes");
    for (const json& e : d.at("top"))
        w.duplicate_strings_top.push_back(
            {e.at("content").get<std::string>(), u64(e, "length"), u64(e, "copies"), u64(e, "saving_bytes")});
    w.collection_saving = u64(j.at("collections"), "saving_bytes");
    for (const json& e : j.at("collections").at("classes"))
        w.collections.push_back({e.at("class").get<std::string>(), u64(e, "count"), u64(e, "empty"), u64(e, "sparse"),
                                 u64(e, "saving_bytes")});
    w.boxed_saving = u64(j.at("boxed"), "saving_bytes");
    for (const json& e : j.at("boxed").at("classes"))
        w.boxed.push_back({e.at("class").get<std::string>(), u64(e, "count"), u64(e, "bytes"),
                           u64(e, "distinct_values"), u64(e, "saving_bytes")});
    w.zero_array_saving = u64(j.at("zero_arrays"), "saving_bytes");
    for (const json& e : j.at("zero_arrays").at("types"))
        w.zero_arrays.push_back({e.at("class").get<std::string>(), u64(e, "count"), u64(e, "bytes")});
}

// The report's summary: the file, its format and layout, the JVM, the totals.
json heaps_json(const std::vector<heap_entry>& heaps) {
    json out = json::array();
    for (const heap_entry& h : heaps)
        out.push_back({{"name", h.name}, {"objects", h.objects}, {"shallow_bytes", h.shallow_bytes}});
    return out;
}

json summary_json(const summary_report& s) {
    return {{"file", s.file},
            {"file_bytes", s.file_bytes},
            {"format", s.format},
            {"id_size", s.id_size},
            {"timestamp_ms", s.timestamp_ms},
            {"layout", s.layout},
            {"layout_inferred", s.layout_inferred},
            {"field_rules", s.field_rules},
            {"field_rules_source", s.field_rules_source},
            {"field_rules_agree", s.field_rules_agree},
            {"field_rules_measured", s.field_rules_measured},
            {"writer", s.writer},
            {"java_version", s.java_version},
            {"java_runtime", s.java_runtime},
            {"version_source", s.version_source},
            {"heap_dumps", s.heap_dumps},
            {"class_roots_inferred", s.class_roots_inferred},
            {"dump_number", s.dump_number},
            {"stripped", s.stripped},
            {"strings_stripped", s.strings_stripped},
            {"instances", s.instances},
            {"object_arrays", s.object_arrays},
            {"primitive_arrays", s.primitive_arrays},
            {"classes", s.classes},
            {"shallow_bytes", s.shallow_bytes},
            {"records", pairs_object(s.records)},
            {"subrecords", pairs_object(s.subrecords)},
            {"gc_roots", pairs_object(s.gc_roots)},
            {"heaps", heaps_json(s.heaps)},
            {"heap_focus", s.heap_focus}};
}

json threads_json(const std::vector<thread_report>& threads) {
    json out = json::array();
    for (const auto& t : threads) {
        json e = {{"name", t.name}};
        if (t.id != 0) e["id"] = t.id;
        if (!t.state.empty()) e["state"] = t.state;
        if (t.daemon) e["daemon"] = *t.daemon;
        e["frames"] = t.frames;
        out.push_back(std::move(e));
    }
    return out;
}

// Read back: the summary.
void summary_from_json(const json& s, summary_report& out) {
    out.file = s.value("file", "");
    out.file_bytes = s.value("file_bytes", std::uint64_t{0});
    out.format = s.at("format").get<std::string>();
    out.id_size = s.at("id_size").get<unsigned>();
    out.timestamp_ms = s.value("timestamp_ms", std::uint64_t{0});
    out.layout = s.value("layout", "");
    out.layout_inferred = s.value("layout_inferred", false);
    out.field_rules = s.value("field_rules", "");
    out.field_rules_source = s.value("field_rules_source", "");
    out.field_rules_agree = s.value("field_rules_agree", std::uint64_t{0});
    out.field_rules_measured = s.value("field_rules_measured", std::uint64_t{0});
    out.writer = s.value("writer", "");
    out.java_version = s.value("java_version", "");
    out.java_runtime = s.value("java_runtime", "");
    out.version_source = s.value("version_source", "");
    out.heap_dumps = s.value("heap_dumps", std::uint64_t{1});
    out.class_roots_inferred = s.value("class_roots_inferred", std::uint64_t{0});
    out.dump_number = s.value("dump_number", 1u);
    out.stripped = s.value("stripped", false);
    out.strings_stripped = s.value("strings_stripped", false);
    out.instances = s.at("instances").get<std::uint64_t>();
    out.object_arrays = s.value("object_arrays", std::uint64_t{0});
    out.primitive_arrays = s.value("primitive_arrays", std::uint64_t{0});
    out.classes = s.at("classes").get<std::uint64_t>();
    out.shallow_bytes = s.at("shallow_bytes").get<std::uint64_t>();
    if (s.contains("records")) out.records = object_pairs(s.at("records"));
    if (s.contains("subrecords")) out.subrecords = object_pairs(s.at("subrecords"));
    out.gc_roots = object_pairs(s.at("gc_roots"));
    if (s.contains("heaps"))
        for (const json& h : s.at("heaps"))
            out.heaps.push_back({h.at("name").get<std::string>(), h.at("objects").get<std::uint64_t>(),
                                 h.at("shallow_bytes").get<std::uint64_t>()});
    out.heap_focus = s.value("heap_focus", "");
}

}  // namespace

nlohmann::ordered_json to_json(const analysis_report& r) {
    json histogram = json::array();
    for (const auto& e : r.histogram) {
        json row = {{"class", e.class_name},
                    {"class_id", e.class_id},
                    {"instances", e.instances},
                    {"shallow_bytes", e.shallow_bytes}};
        if (r.retention.computed) {
            row["reachable_instances"] = e.reachable_instances;
            row["reachable_bytes"] = e.reachable_bytes;
        }
        if (!e.heap_instances.empty()) {
            json heaps = json::object();
            for (std::size_t h = 0; h < e.heap_instances.size() && h < r.summary.heaps.size(); ++h)
                heaps[r.summary.heaps[h].name] = e.heap_instances[h];
            row["heaps"] = std::move(heaps);
        }
        histogram.push_back(std::move(row));
    }
    json largest = json::array();
    for (const auto& o : r.largest_objects) {
        json e = {{"id", o.id}, {"class", o.class_name}, {"class_id", o.class_id}, {"shallow_bytes", o.shallow_bytes}};
        if (o.is_array) e["length"] = o.length;
        largest.push_back(std::move(e));
    }
    json problems = json::array();
    for (const auto& p : r.problems)
        problems.push_back({{"message", p.message}, {"offset", p.offset}, {"truncation", p.truncation}});
    json out = {{"summary", summary_json(r.summary)}, {"histogram", histogram}, {"largest_objects", largest}};
    if (r.retention.computed) retention_json(r.retention, out);
    out["threads"] = threads_json(r.threads);
    out["legacy"] = legacy_json(r.legacy);
    if (r.waste.computed) out["waste"] = waste_json(r.waste);
    out["off_heap"] = off_heap_json(r.off_heap);
    if (r.allocations.joined)
        out["allocation_profile"] = {{"agent", r.allocations.agent},
                                     {"interval", r.allocations.interval},
                                     {"seconds", r.allocations.seconds},
                                     {"samples", r.allocations.samples}};
    out["problems"] = problems;
    if (r.problems_omitted != 0) out["problems_omitted"] = r.problems_omitted;
    return out;
}

gc_path path_from_json(const nlohmann::ordered_json& j) {
    gc_path p;
    p.root_kinds = j.at("root_kinds").get<std::vector<std::string>>();
    p.length = j.at("length").get<std::uint64_t>();
    for (const json& s : j.at("steps"))
        p.steps.push_back({s.at("id").get<std::uint64_t>(), s.at("class").get<std::string>(),
                           s.value("is_class", false), s.value("field", ""), s.value("repeat", std::uint64_t{1})});
    return p;
}

json path_json(const gc_path& path) {
    json steps = json::array();
    for (const path_step& s : path.steps) {
        json e = {{"id", s.id}, {"class", s.class_name}};
        if (s.is_class) e["is_class"] = true;
        if (!s.field.empty()) e["field"] = s.field;
        if (s.repeat > 1) e["repeat"] = s.repeat;
        steps.push_back(std::move(e));
    }
    return {{"root_kinds", path.root_kinds}, {"length", path.length}, {"steps", steps}, {"text", path_text(path)}};
}

json to_json(const object_paths_report& r) {
    json paths = json::array();
    for (const gc_path& p : r.paths) paths.push_back(path_json(p));
    json out = {{"file", r.file}, {"id", r.id}, {"class", r.class_name}};
    if (r.is_array) out["length"] = r.length;
    out["shallow_bytes"] = r.shallow_bytes;
    out["retained_bytes"] = r.retained_bytes;
    out["reachable"] = r.reachable;
    out["paths"] = paths;
    return out;
}

result<object_paths_report> paths_from_json(const nlohmann::ordered_json& j) {
    object_paths_report r;
    try {
        r.file = j.at("file").get<std::string>();
        r.id = j.at("id").get<std::uint64_t>();
        r.class_name = j.at("class").get<std::string>();
        r.is_array = j.contains("length");
        r.length = j.value("length", std::uint64_t{0});
        r.shallow_bytes = j.at("shallow_bytes").get<std::uint64_t>();
        r.retained_bytes = j.at("retained_bytes").get<std::uint64_t>();
        r.reachable = j.at("reachable").get<bool>();
        for (const json& p : j.at("paths")) r.paths.push_back(path_from_json(p));
    } catch (const std::exception& e) {
        return fail(error_code::bad_value, std::string("paths: ") + e.what());
    }
    return r;
}

result<analysis_report> report_from_json(const nlohmann::ordered_json& j) {
    // Whole fields are taken as they come: a number written as a float beyond 2^63 would make its
    // conversion undefined. No JSON heapd writes has one; a file from elsewhere may.
    std::vector<const json*> pending = {&j};
    while (!pending.empty()) {
        const json* v = pending.back();
        pending.pop_back();
        if (v->is_number_float() && !(std::abs(v->get<double>()) < 9.2e18))
            return fail(error_code::bad_value, "the report holds a number out of range");
        if (v->is_structured())
            for (const json& child : *v) pending.push_back(&child);
    }
    try {
        analysis_report r;
        summary_from_json(j.at("summary"), r.summary);
        for (const json& e : j.at("histogram")) {
            r.histogram.push_back({e.value("class_id", std::uint64_t{0}), e.at("class").get<std::string>(),
                                   e.at("instances").get<std::uint64_t>(), e.at("shallow_bytes").get<std::uint64_t>(),
                                   e.value("reachable_instances", std::uint64_t{0}),
                                   e.value("reachable_bytes", std::uint64_t{0})});
            if (e.contains("heaps"))
                for (const heap_entry& h : r.summary.heaps)
                    r.histogram.back().heap_instances.push_back(e.at("heaps").value(h.name, std::uint64_t{0}));
        }
        for (const json& e : j.at("largest_objects"))
            r.largest_objects.push_back({e.at("id").get<std::uint64_t>(), e.value("class_id", std::uint64_t{0}),
                                         e.at("class").get<std::string>(), e.at("shallow_bytes").get<std::uint64_t>(),
                                         e.value("length", std::uint64_t{0}), e.contains("length")});
        for (const json& e : j.at("threads")) {
            thread_report t{e.at("name").get<std::string>(), e.value("state", ""), std::nullopt,
                            e.at("frames").get<std::vector<std::string>>()};
            if (e.contains("daemon")) t.daemon = e.at("daemon").get<bool>();
            t.id = e.value("id", std::uint64_t{0});
            r.threads.push_back(std::move(t));
        }
        if (j.contains("legacy")) legacy_from_json(j.at("legacy"), r.legacy);
        if (j.contains("waste")) waste_from_json(j.at("waste"), r.waste);
        if (j.contains("off_heap")) off_heap_from_json(j.at("off_heap"), r.off_heap);
        if (j.contains("allocation_profile")) {
            const json& a = j.at("allocation_profile");
            r.allocations = {true, a.at("agent").get<std::string>(), a.at("interval").get<std::int64_t>(),
                             a.at("seconds").get<double>(), a.at("samples").get<std::uint64_t>()};
        }
        if (j.contains("dominators"))
            if (auto read = retention_from_json(j, r.retention); !read) return std::unexpected(read.error());
        if (j.contains("problems"))
            for (const json& p : j.at("problems"))
                r.problems.push_back({p.at("message").get<std::string>(), p.at("offset").get<std::uint64_t>(),
                                      p.value("truncation", false)});
        r.problems_omitted = j.value("problems_omitted", std::uint64_t{0});
        return r;
    } catch (const json::exception& e) {
        return fail(error_code::bad_value, std::string("report JSON: ") + e.what());
    }
}

}  // namespace report
}  // namespace heapd
