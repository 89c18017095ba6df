#include "formats/report/report_json.h"

namespace heapd {
inline namespace report {
namespace {

using json = nlohmann::ordered_json;

json holders_json(const std::vector<holder_group>& holders) {
    json a = json::array();
    for (const holder_group& h : holders)
        a.push_back({{"count", h.count}, {"bytes", h.bytes}, {"path", path_json(h.path)}});
    return a;
}

std::vector<holder_group> holders_from_json(const json& a) {
    std::vector<holder_group> out;
    for (const json& h : a)
        out.push_back(
            {h.at("count").get<std::uint64_t>(), h.at("bytes").get<std::uint64_t>(), path_from_json(h.at("path"))});
    return out;
}

json groups_json(const std::vector<thread_group>& groups) {
    json a = json::array();
    for (const thread_group& g : groups)
        a.push_back({{"key", g.key}, {"count", g.count}, {"example", g.example}, {"frames", g.frames}});
    return a;
}

std::vector<thread_group> thread_groups_from_json(const json& a) {
    std::vector<thread_group> out;
    for (const json& g : a)
        out.push_back({g.at("key").get<std::string>(), g.at("count").get<std::uint64_t>(),
                       g.at("example").get<std::string>(), g.at("frames").get<std::vector<std::string>>()});
    return out;
}

void put(json& j, const char* key, const std::optional<std::uint64_t>& v) {
    if (v) j[key] = *v;
}

void get(const json& j, const char* key, std::optional<std::uint64_t>& v) {
    if (j.contains(key)) v = j.at(key).get<std::uint64_t>();
}

json buffers_json(const direct_buffer_report& b) {
    json j = {{"allocated", b.allocated},
              {"allocated_bytes", b.allocated_bytes},
              {"mapped", b.mapped},
              {"mapped_bytes", b.mapped_bytes},
              {"views", b.views},
              {"foreign", b.foreign},
              {"foreign_bytes", b.foreign_bytes},
              {"unreachable", b.unreachable},
              {"unreachable_bytes", b.unreachable_bytes}};
    json jvm = json::object();
    put(jvm, "count", b.jvm_count);
    put(jvm, "capacity_bytes", b.jvm_capacity_bytes);
    put(jvm, "reserved_bytes", b.jvm_reserved_bytes);
    put(jvm, "max_bytes", b.jvm_max_bytes);
    if (!jvm.empty()) j["jvm"] = std::move(jvm);
    j["holders"] = holders_json(b.holders);
    return j;
}

void buffers_from_json(const json& j, direct_buffer_report& b) {
    b.allocated = j.at("allocated").get<std::uint64_t>();
    b.allocated_bytes = j.at("allocated_bytes").get<std::uint64_t>();
    b.mapped = j.at("mapped").get<std::uint64_t>();
    b.mapped_bytes = j.at("mapped_bytes").get<std::uint64_t>();
    b.views = j.at("views").get<std::uint64_t>();
    b.foreign = j.at("foreign").get<std::uint64_t>();
    b.foreign_bytes = j.at("foreign_bytes").get<std::uint64_t>();
    b.unreachable = j.at("unreachable").get<std::uint64_t>();
    b.unreachable_bytes = j.at("unreachable_bytes").get<std::uint64_t>();
    if (j.contains("jvm")) {
        const json& jvm = j.at("jvm");
        get(jvm, "count", b.jvm_count);
        get(jvm, "capacity_bytes", b.jvm_capacity_bytes);
        get(jvm, "reserved_bytes", b.jvm_reserved_bytes);
        get(jvm, "max_bytes", b.jvm_max_bytes);
    }
    b.holders = holders_from_json(j.at("holders"));
}

json loaders_json(const class_loader_report& l) {
    json by_class = json::array(), duplicates = json::array();
    for (const auto& e : l.by_class)
        by_class.push_back({{"class", e.class_name}, {"loaders", e.loaders}, {"classes", e.classes}});
    for (const auto& e : l.duplicates) duplicates.push_back({{"class", e.class_name}, {"loaders", e.loaders}});
    return {{"loaders", l.loaders},           {"classes", l.classes},
            {"boot_classes", l.boot_classes}, {"unreachable", l.unreachable},
            {"by_class", by_class},           {"duplicated_classes", l.duplicated_classes},
            {"duplicates", duplicates},       {"holders", holders_json(l.holders)}};
}

void loaders_from_json(const json& j, class_loader_report& l) {
    l.loaders = j.at("loaders").get<std::uint64_t>();
    l.classes = j.at("classes").get<std::uint64_t>();
    l.boot_classes = j.at("boot_classes").get<std::uint64_t>();
    l.unreachable = j.at("unreachable").get<std::uint64_t>();
    for (const json& e : j.at("by_class"))
        l.by_class.push_back({e.at("class").get<std::string>(), e.at("loaders").get<std::uint64_t>(),
                              e.at("classes").get<std::uint64_t>()});
    l.duplicated_classes = j.at("duplicated_classes").get<std::uint64_t>();
    for (const json& e : j.at("duplicates"))
        l.duplicates.push_back({e.at("class").get<std::string>(), e.at("loaders").get<std::uint64_t>()});
    l.holders = holders_from_json(j.at("holders"));
}

// Present only where the dump has Bitmaps (Android).
json bitmaps_json(const bitmap_report& b) {
    json largest = json::array();
    for (const bitmap_entry& e : b.largest)
        largest.push_back({{"id", e.id},
                           {"width", e.width},
                           {"height", e.height},
                           {"pixel_bytes", e.pixel_bytes},
                           {"in_heap", e.in_heap}});
    return {{"heap", b.heap},
            {"heap_bytes", b.heap_bytes},
            {"native", b.native},
            {"native_bytes", b.native_bytes},
            {"recycled", b.recycled},
            {"unreachable", b.unreachable},
            {"unreachable_bytes", b.unreachable_bytes},
            {"largest", largest},
            {"holders", holders_json(b.holders)}};
}

void bitmaps_from_json(const json& j, bitmap_report& b) {
    b.heap = j.at("heap").get<std::uint64_t>();
    b.heap_bytes = j.at("heap_bytes").get<std::uint64_t>();
    b.native = j.at("native").get<std::uint64_t>();
    b.native_bytes = j.at("native_bytes").get<std::uint64_t>();
    b.recycled = j.at("recycled").get<std::uint64_t>();
    b.unreachable = j.at("unreachable").get<std::uint64_t>();
    b.unreachable_bytes = j.at("unreachable_bytes").get<std::uint64_t>();
    for (const json& e : j.at("largest"))
        b.largest.push_back({e.at("id").get<std::uint64_t>(), e.at("width").get<std::uint32_t>(),
                             e.at("height").get<std::uint32_t>(), e.at("pixel_bytes").get<std::uint64_t>(),
                             e.at("in_heap").get<bool>()});
    b.holders = holders_from_json(j.at("holders"));
}

bool has_bitmaps(const bitmap_report& b) { return b.heap + b.native + b.recycled + b.unreachable != 0; }

}  // namespace

nlohmann::ordered_json off_heap_json(const off_heap_report& r) {
    const thread_summary_report& t = r.threads;
    json states = json::object();
    for (const auto& [state, n] : t.states) states[state] = n;
    json out = {{"computed", r.computed},
                {"threads",
                 {{"count", t.count},
                  {"daemon", t.daemon},
                  {"states", states},
                  {"by_name", groups_json(t.by_name)},
                  {"by_stack", groups_json(t.by_stack)},
                  {"holders", holders_json(t.holders)}}}};
    if (r.computed) {
        out["direct_buffers"] = buffers_json(r.direct_buffers);
        out["class_loaders"] = loaders_json(r.class_loaders);
        if (has_bitmaps(r.bitmaps)) out["bitmaps"] = bitmaps_json(r.bitmaps);
    }
    return out;
}

void off_heap_from_json(const nlohmann::ordered_json& j, off_heap_report& r) {
    r.computed = j.at("computed").get<bool>();
    const json& t = j.at("threads");
    r.threads.count = t.at("count").get<std::uint64_t>();
    r.threads.daemon = t.at("daemon").get<std::uint64_t>();
    for (auto it = t.at("states").begin(); it != t.at("states").end(); ++it)
        r.threads.states.emplace_back(it.key(), it.value().get<std::uint64_t>());
    r.threads.by_name = thread_groups_from_json(t.at("by_name"));
    r.threads.by_stack = thread_groups_from_json(t.at("by_stack"));
    r.threads.holders = holders_from_json(t.at("holders"));
    if (!r.computed) return;
    buffers_from_json(j.at("direct_buffers"), r.direct_buffers);
    loaders_from_json(j.at("class_loaders"), r.class_loaders);
    if (j.contains("bitmaps")) bitmaps_from_json(j.at("bitmaps"), r.bitmaps);
}

}  // namespace report
}  // namespace heapd
