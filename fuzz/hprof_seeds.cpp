// Writes the fuzzer's seed corpus: small synthetic dumps covering every record and sub-record kind,
// and slices of real dumps (prefixes, and heap segments re-framed behind their class names), all
// written by the tests' HPROF builder (tests/support/hprof_builder.h).
// Usage: heapd_fuzz_seeds OUT_DIR [PEER_DUMP...]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "formats/hprof/basic_type.h"
#include "formats/hprof/heap_walk.h"
#include "formats/hprof/hprof_reader.h"
#include "formats/hprof/record_index.h"
#include "support/hprof_builder.h"

namespace {

namespace fs = std::filesystem;

using heapd::test::byte_vector;
using heapd::test::hprof_builder;
using heapd::test::values;

// Seeds stay below the fuzzer's -max_len so none is cut when loaded.
constexpr std::size_t max_seed = 64 * 1024;

std::string as_string(const byte_vector& bytes) {
    return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// n bytes counting from first by step (wrapping at 256).
byte_vector counting_bytes(std::size_t n, unsigned step, unsigned first = 0) {
    byte_vector out(n);
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::byte>(first + i * step);
    return out;
}

// Field types in every HPROF basic type, for class dumps that declare one of each.
constexpr std::uint8_t all_types[] = {2, 4, 5, 6, 7, 8, 9, 10, 11};

// A CLASS_DUMP with a constant pool entry (index 7, int 42), statics (their values counting up)
// and instance fields; fields and statics as (name id, type).
void class_dump(hprof_builder& d, std::uint64_t id, std::uint64_t super, std::uint32_t instance_size,
                const std::vector<std::pair<std::uint64_t, std::uint8_t>>& statics,
                const std::vector<std::pair<std::uint64_t, std::uint8_t>>& fields) {
    heapd::test::class_spec c;
    c.class_id = id;
    c.trace_serial = 1;
    c.super_id = super;
    c.loader_id = 0x100;
    c.instance_size = instance_size;
    c.constants.push_back({7, 10, values().u4(42)});
    for (auto [name, type] : statics)
        c.statics.push_back({name, type, counting_bytes(heapd::value_size(type, d.id_size()), 1, 1)});
    for (auto [name, type] : fields) c.fields.push_back({name, type});
    d.class_dump(c);
}

// The records before the heap: names, classes, frames and traces, and the old agent's records.
void names_and_traces(hprof_builder& d, std::uint64_t heap, bool legacy) {
    const char* names[] = {"java/lang/Object",
                           "java/lang/String",
                           "java/lang/Class",
                           "[I",
                           "[Ljava/lang/Object;",
                           "java/lang/Thread",
                           "Demo",
                           "Demo$Inner",
                           "[B",
                           "java/lang/ClassLoader",
                           "java/lang/Thread$FieldHolder"};
    constexpr int n_classes = 11;
    for (int i = 0; i < n_classes; ++i) d.utf8(100 + i, names[i]);
    const char* field_names[] = {
        "ref",   "flag",         "ch",     "fl",     "db",        "by",  "sh",
        "value", "lg",           "count",  "main",   "Demo.java", "()V", "threadLocalRandomSeed",
        "name",  "threadStatus", "daemon", "holder", "coder"};
    for (int i = 0; i < 19; ++i) d.utf8(200 + i, field_names[i]);
    for (int i = 0; i < n_classes; ++i) d.load_class(i + 1, heap + 0x1000 * (i + 1), 1, 100 + i);
    // Frames and traces: method main, signature ()V, source Demo.java, line numbers of each kind.
    const std::int32_t lines[] = {12, 0, -1, -2, -3};
    for (int i = 0; i < 5; ++i) d.frame(300 + i, 210, 212, 211, 7, lines[i]);
    d.trace(1, 1, {300, 301, 302, 303, 304});
    d.trace(2, 0, std::span<const std::uint64_t>());
    if (legacy) {
        d.start_thread(1, heap + 0x9000, 1, 210, 211, 212);
        d.end_thread(1);
        d.unload_class(9);
        d.alloc_sites(values().u2(0).u4(0x3F000000).u4(10).u4(100).u8(1000).u8(500).u4(0).bytes());
        d.heap_summary(100, 10, 1000, 500);
        d.cpu_samples(0, {});
        d.control_settings(3, 4);
    }
}

// Roots of every kind and class dumps with every field type.
void roots_and_classes(hprof_builder& d, std::uint64_t heap, std::uint64_t obj, bool android) {
    if (android) d.heap_dump_info(0x50, 211);
    d.root_unknown(obj).root_jni_global(obj, 0x55).root_jni_local(obj, 1, 0).root_java_frame(obj + 0x10, 1, 2);
    d.root_native_stack(obj, 1).root_sticky_class(heap + 0x1000).root_thread_block(obj, 1).root_monitor_used(obj);
    d.root_thread_object(obj + 0x40, 1, 1);
    if (android) {
        d.root_interned_string(obj).root_finalizing(obj).root_debugger(obj).root_reference_cleanup(obj);
        d.root_vm_internal(obj).root_unreachable(obj).root_jni_monitor(obj, 1, 3);
    }
    std::vector<std::pair<std::uint64_t, std::uint8_t>> all_fields, statics;
    for (int i = 0; i < 9; ++i) all_fields.push_back({200 + i, all_types[i]});
    for (int i = 0; i < 9; ++i) statics.push_back({200 + i, all_types[i]});
    class_dump(d, heap + 0x1000, 0, 0, {}, {});
    class_dump(d, heap + 0x2000, heap + 0x1000, 24, {}, {{207, 2}, {218, 8}, {209, 10}});
    class_dump(d, heap + 0x3000, heap + 0x1000, 96, statics, {});
    class_dump(d, heap + 0x4000, heap + 0x1000, 16, {}, {});
    class_dump(d, heap + 0x5000, heap + 0x1000, 16, {}, {});
    class_dump(d, heap + 0x6000, heap + 0x1000, 40, {}, {{214, 2}, {215, 10}, {216, 4}, {217, 2}, {213, 11}});
    class_dump(d, heap + 0x7000, heap + 0x1000, 40, statics, all_fields);
    class_dump(d, heap + 0x8000, heap + 0x7000, 48, {}, {{209, 10}, {200, 2}});
    class_dump(d, heap + 0x9000, heap + 0x1000, 16, {}, {});
    class_dump(d, heap + 0xA000, heap + 0x1000, 24, {}, {{200, 2}});
    class_dump(d, heap + 0xB000, heap + 0x1000, 16, {}, {{215, 10}, {216, 4}});
}

// Objects laid out back to back from obj: instances of Demo (all field types), Demo$Inner (its
// fields then Demo's), String and Object; a thread with its name and holder; an Object[] and a
// primitive array of each type. Returns the address after the last.
std::uint64_t objects(hprof_builder& d, std::uint64_t heap, std::uint64_t obj, bool android) {
    const unsigned id_size = d.id_size();
    std::uint64_t at = obj;
    auto instance = [&](std::uint64_t class_id, std::uint32_t data_len, std::uint64_t size) {
        d.instance(at, class_id, counting_bytes(data_len, 7), 1);
        at += size;
    };
    const std::uint32_t demo_len = id_size + 1 + 2 + 4 + 8 + 1 + 2 + 4 + 8;
    instance(heap + 0x7000, demo_len, 48);
    instance(heap + 0x8000, 4 + id_size + demo_len, 56);
    instance(heap + 0x2000, id_size + 1 + 4, 24);
    instance(heap + 0x1000, 0, 16);
    // A thread: its Thread object (name, status, daemon, holder), name String, holder, and the
    // name's byte[] value, with a thread root pointing at it.
    const std::uint64_t thread = at, name = at + 40, holder = at + 64, value = at + 80;
    d.instance(thread, heap + 0x6000, values(id_size).id(name).u4(0x401).u1(1).id(holder).u8(7).bytes(), 1);
    d.instance(name, heap + 0x2000, values(id_size).id(value).u1(0).u4(0).bytes(), 1);
    d.instance(holder, heap + 0xB000, values(id_size).u4(0x15).u1(0).bytes(), 1);
    d.primitive_array(value, 8, 4, values().u1('m').u1('a').u1('i').u1('n').bytes(), 1);
    d.root_thread_object(thread, 1, 1);
    at = value + 24;
    d.object_array(at, heap + 0x5000, {obj, 0, obj + 0x10}, 1);
    at += 32;
    for (std::uint8_t t = 4; t <= 11; ++t) {
        const std::uint32_t n = t;
        const std::size_t bytes = n * heapd::value_size(t, id_size);
        d.primitive_array(at, t, n, counting_bytes(bytes, 1), 1);
        at += 16 + ((bytes + 7) & ~std::size_t{7});
    }
    if (android) d.primitive_array_nodata(at, 8, 1000, 1);
    return at;
}

// A small but complete dump: names, classes, frames, traces, threads, every GC root kind,
// classes with all field types, instances, object and primitive arrays, several segments.
std::string synthetic_dump(std::string_view version, unsigned id_size, bool android, bool legacy, bool segments) {
    hprof_builder d(id_size, "JAVA PROFILE " + std::string(version), 0x0000018B2E3F4A5Bull);
    const std::uint64_t heap = id_size == 8 ? 0x7000'0000'0000ull : 0x1000'0000ull;
    const std::uint64_t obj = heap + 0x100000;
    names_and_traces(d, heap, legacy);
    d.begin_segment(segments ? 0x1C : 0x0C);
    roots_and_classes(d, heap, obj, android);
    if (segments) d.end_segment().begin_segment(0x1C);
    const std::uint64_t at = objects(d, heap, obj, android);
    d.end_segment();
    if (segments) {
        d.begin_segment(0x1C).instance(at + 64, heap + 0x1000, {}, 1).end_segment();
        d.heap_dump_end();
    }
    return as_string(d.bytes());
}

// Dumps built to stress damage handling: cut records, unknown tags, a super-class cycle.
std::vector<std::pair<std::string, std::string>> damaged_dumps() {
    std::vector<std::pair<std::string, std::string>> out;
    std::string good = synthetic_dump("1.0.2", 8, false, false, true);
    out.push_back({"cut-mid-heap", good.substr(0, good.size() * 3 / 4)});
    out.push_back({"cut-record-header", good.substr(0, good.size() - 3)});
    out.push_back({"header-only", good.substr(0, 31)});
    hprof_builder d(8, "JAVA PROFILE 1.0.2", 0x0000018B2E3F4A5Bull);
    d.utf8(1, "A").utf8(2, "B").utf8(3, "x");
    d.load_class(1, 0x10, 1, 1).load_class(2, 0x20, 1, 2);
    d.begin_segment();
    class_dump(d, 0x10, 0x20, 16, {}, {{3, 10}});  // a super-class cycle
    class_dump(d, 0x20, 0x10, 16, {}, {{3, 11}});
    d.instance(0x100, 0x10, values().u4(1).u8(2).bytes(), 0);
    d.end_segment();
    d.begin_segment().instance(0x200, 0x20, values().u8(5).bytes(), 0);
    d.raw_subrecord(values().u1(0x77).u4(0).bytes()).end_segment();  // unknown sub-record
    d.raw_record(0x99, values().u4(1).bytes());                      // unknown top-level record
    d.begin_segment()
        .raw_subrecord(values().u1(0x23).u8(0x300).u4(0).u4(2).u1(3).u4(0).bytes())
        .end_segment();  // bad type
    d.begin_segment()
        .raw_subrecord(values().u1(0x22).u8(0x400).u4(0).u4(0x40000000).u8(0x10).bytes())
        .end_segment();  // overrun
    out.push_back({"damaged-segments", as_string(d.bytes())});
    return out;
}

bool write_file(const fs::path& path, std::string_view data) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(data.data(), static_cast<std::streamsize>(data.size()));
    return static_cast<bool>(f);
}

// Records the first file offset of each sub-record kind, and all sub-record starts, in one segment.
struct boundary_finder : heapd::heap_visitor {
    std::vector<std::uint64_t> starts;
    std::vector<std::uint64_t> first_of_kind;
    std::vector<int> seen = std::vector<int>(256, 0);

    void at(std::uint8_t tag, std::uint64_t off) {
        starts.push_back(off);
        if (!seen[tag]++) first_of_kind.push_back(off);
    }
    void root(const heapd::root_view& r) { at(static_cast<std::uint8_t>(r.kind) + 0x80, r.offset); }
    void class_dump(const heapd::class_dump_view& c) { at(0x20, c.offset); }
    void instance(const heapd::instance_view& v) { at(0x21, v.offset); }
    void object_array(const heapd::object_array_view& v) { at(0x22, v.offset); }
    void primitive_array(const heapd::primitive_array_view& v) { at(0x23, v.offset); }
    void heap_info(const heapd::heap_info_view& h) { at(0xFE, h.offset); }
};

// Seeds from one real dump: prefixes, and windows of its first heap record framed as a small dump
// with the dump's own header and its LOAD_CLASS records and their names.
int peer_seeds(const fs::path& peer, const fs::path& out_dir) {
    std::ifstream f(peer, std::ios::binary);
    if (!f) {
        std::fprintf(stderr, "cannot read %s\n", peer.c_str());
        return 1;
    }
    std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const std::string stem = peer.stem().string();
    for (std::size_t len : {std::size_t{4096}, std::size_t{16384}, max_seed})
        write_file(out_dir / (stem + "-prefix-" + std::to_string(len / 1024) + "k"),
                   std::string_view(data).substr(0, len));

    auto reader = heapd::hprof_reader::parse(std::as_bytes(std::span(data.data(), data.size())));
    if (!reader) return 0;
    const heapd::record_index idx = heapd::record_index::build(*reader);
    if (idx.heap_records().empty()) return 0;
    const auto base = reinterpret_cast<const std::byte*>(data.data());

    // The dump's header, then LOAD_CLASS records and the UTF8 records naming them, within a third
    // of a seed.
    hprof_builder meta(reader->id_size(), reader->header().format, reader->header().timestamp_ms);
    for (const heapd::loaded_class& c : idx.classes()) {
        std::string_view name = idx.utf8(c.name_id);
        const std::uint64_t records = (9 + reader->id_size() + name.size()) + (9 + 8 + 2 * reader->id_size());
        if (meta.size() + records > max_seed / 3) break;
        meta.utf8(c.name_id, name).load_class(c.serial, c.class_id, c.trace_serial, c.name_id);
    }

    const heapd::hprof_record& heap = idx.heap_records().front();
    boundary_finder b;
    (void)heapd::walk_heap_body(heap.body, heap.body_offset, idx.id_size(), b);
    if (b.starts.empty()) return 0;
    std::vector<std::uint64_t> window_starts = b.first_of_kind;
    for (std::size_t i = 1; i <= 8; ++i) window_starts.push_back(b.starts[b.starts.size() * i / 9]);
    std::sort(window_starts.begin(), window_starts.end());
    window_starts.erase(std::unique(window_starts.begin(), window_starts.end()), window_starts.end());

    const std::uint64_t heap_end = heap.body_offset + heap.body.size();
    int n = 0;
    for (std::uint64_t start : window_starts) {
        // End the window at the last sub-record boundary that keeps the seed within max_seed.
        const std::uint64_t room = max_seed - meta.size() - 9;
        std::uint64_t end = std::min(heap_end, start + room);
        auto next = std::upper_bound(b.starts.begin(), b.starts.end(), end);
        if (end != heap_end && next != b.starts.begin() && *std::prev(next) > start) end = *std::prev(next);
        hprof_builder seed = meta;
        seed.raw_record(heap.tag, std::span(base + start, end - start));
        write_file(out_dir / (stem + "-heap-" + std::to_string(n++)), as_string(seed.bytes()));
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s OUT_DIR [PEER_DUMP...]\n", argv[0]);
        return 2;
    }
    const fs::path out_dir = argv[1];
    std::error_code ec;
    fs::create_directories(out_dir, ec);
    if (ec) {
        std::fprintf(stderr, "cannot create %s: %s\n", out_dir.c_str(), ec.message().c_str());
        return 1;
    }
    int status = 0;
    auto put = [&](const std::string& name, const std::string& data) {
        if (!write_file(out_dir / name, data)) {
            std::fprintf(stderr, "cannot write %s\n", (out_dir / name).c_str());
            status = 1;
        }
    };
    put("synthetic-64-segments", synthetic_dump("1.0.2", 8, false, false, true));
    put("synthetic-64-heapdump", synthetic_dump("1.0.2", 8, false, false, false));
    put("synthetic-32-legacy", synthetic_dump("1.0.1", 4, false, true, false));
    put("synthetic-32-segments", synthetic_dump("1.0.2", 4, false, false, true));
    put("synthetic-android", synthetic_dump("1.0.3", 4, true, false, true));
    put("synthetic-64-android", synthetic_dump("1.0.3", 8, true, true, true));
    for (const auto& [name, data] : damaged_dumps()) put(name, data);
    for (int i = 2; i < argc; ++i) status |= peer_seeds(argv[i], out_dir);
    return status;
}
