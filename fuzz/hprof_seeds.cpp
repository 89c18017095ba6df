// Writes the fuzzer's seed corpus: small synthetic dumps covering every record and sub-record kind,
// and slices of real dumps (prefixes, and heap segments re-framed behind their class names).
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

namespace {

namespace fs = std::filesystem;

// Seeds stay below the fuzzer's -max_len so none is cut when loaded.
constexpr std::size_t max_seed = 64 * 1024;

// Appends big-endian values to a byte string.
struct bytes_out {
    unsigned id_size = 8;
    std::string b;

    bytes_out& u1(std::uint8_t v) {
        b.push_back(static_cast<char>(v));
        return *this;
    }
    bytes_out& u2(std::uint16_t v) { return u1(v >> 8).u1(v & 0xFF); }
    bytes_out& u4(std::uint32_t v) { return u2(v >> 16).u2(v & 0xFFFF); }
    bytes_out& u8(std::uint64_t v) { return u4(v >> 32).u4(v & 0xFFFFFFFF); }
    bytes_out& id(std::uint64_t v) { return id_size == 8 ? u8(v) : u4(static_cast<std::uint32_t>(v)); }
    bytes_out& raw(std::string_view s) {
        b.append(s);
        return *this;
    }
};

// A synthetic dump under construction: header, then top-level records.
struct dump_builder {
    bytes_out out;

    dump_builder(std::string_view version, unsigned id_size) {
        out.id_size = id_size;
        out.raw("JAVA PROFILE ").raw(version).u1(0).u4(id_size).u8(0x0000018B2E3F4A5Bull);
    }
    bytes_out body() const { return bytes_out{out.id_size, {}}; }
    void record(std::uint8_t tag, const bytes_out& body, std::uint32_t time = 0) {
        out.u1(tag).u4(time).u4(static_cast<std::uint32_t>(body.b.size())).raw(body.b);
    }
    void utf8(std::uint64_t id, std::string_view s) { record(0x01, body().id(id).raw(s)); }
    void load_class(std::uint32_t serial, std::uint64_t class_id, std::uint64_t name_id) {
        record(0x02, body().u4(serial).id(class_id).u4(1).id(name_id));
    }
};

// Field types in every HPROF basic type, for class dumps that declare one of each.
constexpr std::uint8_t all_types[] = {2, 4, 5, 6, 7, 8, 9, 10, 11};

// A CLASS_DUMP with a constant pool entry, statics and instance fields named by field_names.
void class_dump(bytes_out& s, std::uint64_t id, std::uint64_t super, std::uint32_t instance_size,
                const std::vector<std::pair<std::uint64_t, std::uint8_t>>& statics,
                const std::vector<std::pair<std::uint64_t, std::uint8_t>>& fields) {
    s.u1(0x20).id(id).u4(1).id(super).id(0x100).id(0).id(0).id(0).id(0).u4(instance_size);
    s.u2(1).u2(7).u1(10).u4(42);  // one constant pool entry: index 7, int 42
    s.u2(static_cast<std::uint16_t>(statics.size()));
    for (auto [name, type] : statics) {
        s.id(name).u1(type);
        for (unsigned i = 0; i < heapd::value_size(type, s.id_size); ++i) s.u1(static_cast<std::uint8_t>(i + 1));
    }
    s.u2(static_cast<std::uint16_t>(fields.size()));
    for (auto [name, type] : fields) s.id(name).u1(type);
}

// A small but complete dump: names, classes, frames, traces, threads, every GC root kind,
// classes with all field types, instances, object and primitive arrays, several segments.
std::string synthetic_dump(std::string_view version, unsigned id_size, bool android, bool legacy, bool segments) {
    dump_builder d(version, id_size);
    const std::uint64_t heap = id_size == 8 ? 0x7000'0000'0000ull : 0x1000'0000ull;
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
    for (int i = 0; i < n_classes; ++i) d.load_class(i + 1, heap + 0x1000 * (i + 1), 100 + i);
    // Frames and traces: method main, signature ()V, source Demo.java, line numbers of each kind.
    const std::int32_t lines[] = {12, 0, -1, -2, -3};
    for (int i = 0; i < 5; ++i)
        d.record(0x04, d.body().id(300 + i).id(210).id(212).id(211).u4(7).u4(static_cast<std::uint32_t>(lines[i])));
    {
        bytes_out t = d.body();
        t.u4(1).u4(1).u4(5);
        for (int i = 0; i < 5; ++i) t.id(300 + i);
        d.record(0x05, t);
        d.record(0x05, d.body().u4(2).u4(0).u4(0));
    }
    if (legacy) {
        d.record(0x0A, d.body().u4(1).id(heap + 0x9000).u4(1).id(210).id(211).id(212));
        d.record(0x0B, d.body().u4(1));
        d.record(0x03, d.body().u4(9));
        d.record(0x06, d.body().u2(0).u4(0x3F000000).u4(10).u4(100).u8(1000).u8(500).u4(0));
        d.record(0x07, d.body().u4(100).u4(10).u8(1000).u8(500));
        d.record(0x0D, d.body().u4(0).u4(0));
        d.record(0x0E, d.body().u4(3).u2(4));
    }

    // Heap: roots, class dumps, objects laid out back to back, arrays of every type.
    bytes_out h = d.body();
    const std::uint64_t obj = heap + 0x100000;
    if (android) h.u1(0xFE).u4(0x50).id(211);
    h.u1(0xFF).id(obj);
    h.u1(0x01).id(obj).id(0x55);
    h.u1(0x02).id(obj).u4(1).u4(0);
    h.u1(0x03).id(obj + 0x10).u4(1).u4(2);
    h.u1(0x04).id(obj).u4(1);
    h.u1(0x05).id(heap + 0x1000);
    h.u1(0x06).id(obj).u4(1);
    h.u1(0x07).id(obj);
    h.u1(0x08).id(obj + 0x40).u4(1).u4(1);
    if (android)
        for (std::uint8_t t : {0x89, 0x8A, 0x8B, 0x8C, 0x8D, 0x90}) h.u1(t).id(obj);
    if (android) h.u1(0x8E).id(obj).u4(1).u4(3);
    std::vector<std::pair<std::uint64_t, std::uint8_t>> all_fields, statics;
    for (int i = 0; i < 9; ++i) all_fields.push_back({200 + i, all_types[i]});
    for (int i = 0; i < 9; ++i) statics.push_back({200 + i, all_types[i]});
    class_dump(h, heap + 0x1000, 0, 0, {}, {});
    class_dump(h, heap + 0x2000, heap + 0x1000, 24, {}, {{207, 2}, {218, 8}, {209, 10}});
    class_dump(h, heap + 0x3000, heap + 0x1000, 96, statics, {});
    class_dump(h, heap + 0x4000, heap + 0x1000, 16, {}, {});
    class_dump(h, heap + 0x5000, heap + 0x1000, 16, {}, {});
    class_dump(h, heap + 0x6000, heap + 0x1000, 40, {}, {{214, 2}, {215, 10}, {216, 4}, {217, 2}, {213, 11}});
    class_dump(h, heap + 0x7000, heap + 0x1000, 40, statics, all_fields);
    class_dump(h, heap + 0x8000, heap + 0x7000, 48, {}, {{209, 10}, {200, 2}});
    class_dump(h, heap + 0x9000, heap + 0x1000, 16, {}, {});
    class_dump(h, heap + 0xA000, heap + 0x1000, 24, {}, {{200, 2}});
    class_dump(h, heap + 0xB000, heap + 0x1000, 16, {}, {{215, 10}, {216, 4}});

    if (segments) {
        d.record(0x1C, h);
        h = d.body();
    }
    // Instances of Demo (all field types), Demo$Inner (its fields then Demo's), String, Object.
    std::uint64_t at = obj;
    auto instance = [&](std::uint64_t class_id, std::uint32_t data_len, std::uint64_t size) {
        h.u1(0x21).id(at).u4(1).id(class_id).u4(data_len);
        for (std::uint32_t i = 0; i < data_len; ++i) h.u1(static_cast<std::uint8_t>(i * 7));
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
    h.u1(0x21).id(thread).u4(1).id(heap + 0x6000).u4(2 * id_size + 4 + 1 + 8);
    h.id(name).u4(0x401).u1(1).id(holder).u8(7);
    h.u1(0x21).id(name).u4(1).id(heap + 0x2000).u4(id_size + 1 + 4).id(value).u1(0).u4(0);
    h.u1(0x21).id(holder).u4(1).id(heap + 0xB000).u4(5).u4(0x15).u1(0);
    h.u1(0x23).id(value).u4(1).u4(4).u1(8).raw("main");
    h.u1(0x08).id(thread).u4(1).u4(1);
    at = value + 24;
    // An Object[] of three references and a primitive array of each type.
    h.u1(0x22).id(at).u4(1).u4(3).id(heap + 0x5000).id(obj).id(0).id(obj + 0x10);
    at += 32;
    for (std::uint8_t t = 4; t <= 11; ++t) {
        const std::uint32_t n = t;
        h.u1(0x23).id(at).u4(1).u4(n).u1(t);
        for (std::uint32_t i = 0; i < n * heapd::value_size(t, id_size); ++i) h.u1(static_cast<std::uint8_t>(i));
        at += 16 + ((n * heapd::value_size(t, id_size) + 7) & ~7u);
    }
    if (android) h.u1(0xC3).id(at).u4(1).u4(1000).u1(8);
    d.record(segments ? 0x1C : 0x0C, h);
    if (segments) {
        bytes_out tail = d.body();
        tail.u1(0x21).id(at + 64).u4(1).id(heap + 0x1000).u4(0);
        d.record(0x1C, tail);
        d.record(0x2C, d.body());
    }
    return d.out.b;
}

// Dumps built to stress damage handling: cut records, unknown tags, a super-class cycle.
std::vector<std::pair<std::string, std::string>> damaged_dumps() {
    std::vector<std::pair<std::string, std::string>> out;
    std::string good = synthetic_dump("1.0.2", 8, false, false, true);
    out.push_back({"cut-mid-heap", good.substr(0, good.size() * 3 / 4)});
    out.push_back({"cut-record-header", good.substr(0, good.size() - 3)});
    out.push_back({"header-only", good.substr(0, 31)});
    {
        dump_builder d("1.0.2", 8);
        d.utf8(1, "A");
        d.utf8(2, "B");
        d.utf8(3, "x");
        d.load_class(1, 0x10, 1);
        d.load_class(2, 0x20, 2);
        bytes_out h = d.body();
        class_dump(h, 0x10, 0x20, 16, {}, {{3, 10}});
        class_dump(h, 0x20, 0x10, 16, {}, {{3, 11}});
        h.u1(0x21).id(0x100).u4(0).id(0x10).u4(12).u4(1).u8(2);
        d.record(0x1C, h);
        bytes_out bad = d.body();
        bad.u1(0x21).id(0x200).u4(0).id(0x20).u4(8).u8(5).u1(0x77).u4(0);  // unknown sub-record
        d.record(0x1C, bad);
        d.record(0x99, d.body().u4(1));  // unknown top-level record
        bytes_out bad_type = d.body();
        bad_type.u1(0x23).id(0x300).u4(0).u4(2).u1(3).u4(0);  // primitive array of a bad type
        d.record(0x1C, bad_type);
        d.record(0x1C, d.body().u1(0x22).id(0x400).u4(0).u4(0x40000000).id(0x10));  // length overrun
        out.push_back({"damaged-segments", d.out.b});
    }
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

    // Header, then LOAD_CLASS records and the UTF8 records naming them, within a third of a seed.
    std::string meta(data, 0, reader->header().header_bytes);
    bytes_out names{reader->id_size(), {}};
    for (const heapd::loaded_class& c : idx.classes()) {
        std::string_view name = idx.utf8(c.name_id);
        bytes_out rec{reader->id_size(), {}};
        rec.u1(0x01).u4(0).u4(static_cast<std::uint32_t>(reader->id_size() + name.size())).id(c.name_id).raw(name);
        rec.u1(0x02).u4(0).u4(8 + 2 * reader->id_size()).u4(c.serial).id(c.class_id).u4(c.trace_serial).id(c.name_id);
        if (meta.size() + names.b.size() + rec.b.size() > max_seed / 3) break;
        names.b += rec.b;
    }
    meta += names.b;

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
        bytes_out rec{idx.id_size(), meta};
        rec.u1(heap.tag).u4(0).u4(static_cast<std::uint32_t>(end - start));
        rec.b.append(reinterpret_cast<const char*>(base + start), end - start);
        write_file(out_dir / (stem + "-heap-" + std::to_string(n++)), rec.b);
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
