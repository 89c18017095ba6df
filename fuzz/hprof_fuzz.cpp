// libFuzzer entry point: feeds arbitrary bytes through the HPROF reader, the record index, the heap
// walk with the census, the class table lookups, and the whole analysis with its text and JSON
// reports. Any sanitizer report, abort or escaping exception is a finding.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analysis.h"
#include "analysis/census.h"
#include "formats/hprof/big_endian.h"
#include "formats/hprof/class_table.h"
#include "formats/hprof/heap_walk.h"
#include "formats/hprof/hprof_reader.h"
#include "formats/hprof/record_index.h"
#include "formats/report/report_json.h"
#include "formats/report/report_text.h"

namespace {

// Keeps the optimizer from dropping reads whose results are otherwise unused.
volatile std::uint64_t sink;

// Class ids kept from the walk for lookups once the class table is complete.
constexpr std::size_t max_probe_ids = 16;

// Forwards every sub-record to the census and reads a little more of each view on the way.
struct fuzz_visitor : heapd::heap_visitor {
    heapd::heap_census* census;
    std::vector<std::uint64_t> probe_ids;

    void probe(std::uint64_t class_id) {
        if (probe_ids.size() < max_probe_ids) probe_ids.push_back(class_id);
    }

    void root(const heapd::root_view& r) {
        sink = r.object_id ^ r.thread_serial ^ r.frame_index;
        census->root(r);
    }
    void class_dump(const heapd::class_dump_view& c) {
        std::uint64_t acc = c.class_id() ^ c.super_id() ^ c.loader_id() ^ c.signers_id() ^ c.protection_domain_id() ^
                            c.instance_size() ^ c.static_count() ^ c.field_count();
        c.for_each_static([&](const heapd::class_dump_view::static_field& s) {
            acc ^= s.name_id ^ s.type;
            for (std::byte b : s.value) acc += static_cast<std::uint8_t>(b);
        });
        c.for_each_field([&](const heapd::class_dump_view::field& f) { acc ^= f.name_id + f.type; });
        sink = acc;
        probe(c.class_id());
        census->class_dump(c);
    }
    void instance(const heapd::instance_view& v) {
        if (!v.data.empty()) sink = static_cast<std::uint8_t>(v.data.back());
        probe(v.class_id);
        census->instance(v);
    }
    void object_array(const heapd::object_array_view& v) {
        if (v.length > 0) {
            std::uint64_t acc = v.element(0) ^ v.element(v.length - 1) ^ v.element(v.length / 2);
            for (std::uint32_t i = 0; i < v.length && i < 64; ++i) acc += v.element(i);
            sink = acc;
        }
        probe(v.class_id);
        census->object_array(v);
    }
    void primitive_array(const heapd::primitive_array_view& v) {
        if (!v.data.empty())
            sink = static_cast<std::uint8_t>(v.data.front()) ^ static_cast<std::uint8_t>(v.data.back());
        census->primitive_array(v);
    }
    void heap_info(const heapd::heap_info_view& h) {
        sink = h.heap_type ^ h.name_id;
        census->heap_info(h);
    }
};

// Reads what the index offers through its lookups, the way reports do.
void touch_index(const heapd::record_index& idx) {
    std::uint64_t acc = idx.problems().size() + idx.truncated() + idx.legacy_records().size();
    for (const heapd::loaded_class& c : idx.classes()) {
        acc += idx.class_name(c.class_id).size() + idx.utf8(c.name_id).size();
        if (const heapd::loaded_class* s = idx.class_by_serial(c.serial)) acc ^= s->class_id;
    }
    for (const heapd::trace_info& t : idx.traces()) {
        if (const heapd::trace_info* same = idx.trace(t.serial)) acc ^= same->thread_serial;
        const unsigned id = idx.id_size();
        for (std::size_t off = 0; off + id <= t.frame_ids.size(); off += id) {
            std::uint64_t frame_id = heapd::be::id(t.frame_ids.data() + off, id);
            if (const heapd::frame_info* f = idx.frame(frame_id))
                acc += idx.utf8(f->method_name_id).size() + idx.utf8(f->signature_id).size() +
                       idx.utf8(f->source_file_id).size() + static_cast<std::uint32_t>(f->line);
        }
    }
    for (const heapd::started_thread& t : idx.started_threads())
        acc += idx.utf8(t.name_id).size() + idx.utf8(t.group_name_id).size() + (idx.trace(t.trace_serial) != nullptr);
    for (const heapd::hprof_record& r : idx.heap_records()) acc += r.body.size();
    for (const heapd::error_info& e : idx.problems()) acc += e.describe().size();
    sink = acc;
}

// Looks up fields, names and ancestry of one class, with names the class really declares.
void touch_class(const heapd::class_table& classes, const heapd::record_index& idx, std::uint64_t class_id) {
    std::uint64_t acc = classes.java_name(class_id).size();
    acc += classes.find_field(class_id, "value").has_value();
    acc += classes.find_field(class_id, "").has_value();
    acc += classes.is_a(class_id, "java.lang.Object") + classes.is_a(class_id, "java.lang.Thread");
    if (const heapd::class_info* c = classes.find(class_id)) {
        acc += classes.java_name(c->super_id()).size();
        int n = 0;
        c->dump.for_each_field([&](const heapd::class_dump_view::field& f) {
            if (n++ >= 4) return;
            if (auto slot = classes.find_field(class_id, idx.utf8(f.name_id))) acc += slot->offset + slot->type;
        });
        if (!c->raw_name.empty()) acc += classes.find_by_name(c->raw_name) != nullptr;
    }
    sink = acc;
}

// Runs the analysis `heapd analyze` runs, renders both report forms and reads the JSON back.
void analyze(std::span<const std::byte> bytes) {
    heapd::analysis_options options;
    options.top = 8;
    options.file_name = "fuzz.hprof";
    auto report = heapd::analyze_dump(bytes, options);
    if (!report) {
        sink = report.error().describe().size();
        return;
    }
    sink = heapd::render_text(*report, {8, 8}).size();
    std::string text = heapd::to_json(*report).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    auto back = heapd::report_from_json(nlohmann::ordered_json::parse(text));
    sink = back.has_value();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto bytes = std::as_bytes(std::span<const std::uint8_t>(data, size));
    analyze(bytes);
    auto reader = heapd::hprof_reader::parse(bytes);
    if (!reader) {
        sink = reader.error().describe().size();
        return 0;
    }
    sink = reader->header().format.size() ^ reader->header().timestamp_ms;

    const heapd::record_index idx = heapd::record_index::build(*reader);
    touch_index(idx);

    heapd::class_table classes(idx);
    heapd::heap_census census(idx, classes, 8);
    fuzz_visitor v;
    v.census = &census;
    heapd::problem_list problems;
    heapd::walk_heap(idx, v, &problems);
    for (const heapd::error_info& e : problems.kept()) sink = e.describe().size();

    heapd::census_result r = census.finish();
    std::uint64_t acc = r.layout.size() + r.instances + r.shallow_bytes + r.classes;
    for (const heapd::histogram_entry& e : r.histogram) acc += e.class_name.size() + e.instances;
    for (const heapd::object_entry& o : r.largest) acc += o.class_name.size() + o.shallow_bytes;
    sink = acc;

    for (std::uint64_t id : v.probe_ids) touch_class(classes, idx, id);
    for (std::size_t i = 0; i < classes.all().size() && i < 8; ++i) touch_class(classes, idx, classes.all()[i].id());
    touch_class(classes, idx, 0);
    sink = classes.find_by_name("java.lang.String") != nullptr;
    return 0;
}
