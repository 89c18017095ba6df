#include "formats/hprof/record_index.h"

#include <cstdio>

#include "formats/hprof/big_endian.h"

namespace heapd {
inline namespace hprof {
namespace {

// Reads fixed-size fields from a record body, refusing to go past its end.
class body_reader {
public:
    body_reader(const hprof_record& rec, unsigned id_size) : rec_(rec), id_size_(id_size) {}
    bool has(std::size_t n) const { return rec_.body.size() - pos_ >= n; }
    std::uint32_t u4() {
        auto v = be::u4(at());
        pos_ += 4;
        return v;
    }
    std::uint16_t u2() {
        auto v = be::u2(at());
        pos_ += 2;
        return v;
    }
    std::uint64_t id() {
        auto v = be::id(at(), id_size_);
        pos_ += id_size_;
        return v;
    }
    std::span<const std::byte> rest() const { return rec_.body.subspan(pos_); }
    std::span<const std::byte> take(std::size_t n) {
        auto s = rec_.body.subspan(pos_, n);
        pos_ += n;
        return s;
    }

private:
    const std::byte* at() const { return rec_.body.data() + pos_; }
    const hprof_record& rec_;
    unsigned id_size_;
    std::size_t pos_ = 0;
};

error_info short_record(const hprof_record& rec) {
    return {error_code::bad_value, std::string(record_tag_name(rec.tag)) + " record is shorter than its fields",
            rec.offset};
}

// Stores value under key, replacing what an earlier record said: in a file holding several heap
// dumps, the definitions written last before a dump are the ones that dump means.
template <class V>
void put(id_map<V>& map, std::uint64_t key, const V& value) {
    auto [slot, inserted] = map.insert(key, value);
    if (!inserted) *slot = value;
}

// Where the chosen heap dump's last record ends (the end of the file when the last is chosen, or
// when there is no such dump): definitions after it belong to later dumps.
std::uint64_t end_of_dump(const hprof_reader& reader, unsigned dump) {
    constexpr std::uint64_t whole_file = ~std::uint64_t{0};
    if (dump == last_heap_dump || dump == every_heap_dump) return whole_file;
    unsigned seen = 0;
    bool open = false;
    auto cursor = reader.records();
    for (auto next = cursor.next(); next && *next; next = cursor.next()) {
        const hprof_record& rec = **next;
        const auto tag = static_cast<record_tag>(rec.tag);
        if (tag == record_tag::heap_dump || (tag == record_tag::heap_dump_segment && !open)) ++seen;
        if (seen > dump) return rec.offset;  // a new dump began without the chosen one's end
        if (tag == record_tag::heap_dump_segment) open = true;
        if (tag == record_tag::heap_dump || tag == record_tag::heap_dump_end) {
            open = false;
            if (seen == dump) return rec.body_offset + rec.body.size();
        }
    }
    return whole_file;
}

}  // namespace

record_index record_index::build(const hprof_reader& reader, unsigned dump) {
    record_index idx;
    idx.id_size_ = reader.id_size();
    idx.definitions_end_ = end_of_dump(reader, dump);
    auto cursor = reader.records();
    for (;;) {
        auto next = cursor.next();
        if (!next) {
            idx.problems_.add(next.error());
            idx.truncated_ = true;
            break;
        }
        if (!*next) break;
        const hprof_record& rec = **next;
        if (rec.truncated) {
            idx.truncated_ = true;
            const char* name = record_tag_name(rec.tag);
            idx.problems_.add({error_code::out_of_bounds,
                               std::string("file ends inside a ") + (name ? name : "record") +
                                   " record: the dump was cut short; showing what was read before the cut",
                               rec.offset});
        }
        idx.add(rec);
    }
    const std::size_t dumps = idx.dump_starts_.size(), records = idx.heap_records_.size();
    if (dump == every_heap_dump) {
        idx.dump_size_ = records;
    } else if (dumps > 0 && (dump == last_heap_dump || dump <= dumps)) {
        const std::size_t n = dump == last_heap_dump ? dumps : dump;
        idx.dump_begin_ = idx.dump_starts_[n - 1];
        idx.dump_size_ = (n < dumps ? idx.dump_starts_[n] : records) - idx.dump_begin_;
        idx.dump_number_ = static_cast<unsigned>(n);
    }
    return idx;
}

void record_index::add(const hprof_record& rec) {
    ++record_counts_[rec.tag];
    const bool heap = rec.tag == static_cast<std::uint8_t>(record_tag::heap_dump) ||
                      rec.tag == static_cast<std::uint8_t>(record_tag::heap_dump_segment) ||
                      rec.tag == static_cast<std::uint8_t>(record_tag::heap_dump_end);
    if (!heap && rec.offset >= definitions_end_) return;  // of a later heap dump than the chosen one
    body_reader r(rec, id_size_);
    const unsigned id = id_size_;
    switch (static_cast<record_tag>(rec.tag)) {
    case record_tag::utf8: {
        if (!r.has(id)) {
            problems_.add(short_record(rec));
            return;
        }
        std::uint64_t sid = r.id();
        auto text = r.rest();
        put(utf8_, sid, {reinterpret_cast<const char*>(text.data()), text.size()});
        return;
    }
    case record_tag::load_class: {
        if (!r.has(8 + 2 * id)) {
            problems_.add(short_record(rec));
            return;
        }
        loaded_class c;
        c.serial = r.u4();
        c.class_id = r.id();
        c.trace_serial = r.u4();
        c.name_id = r.id();
        classes_.push_back(c);
        put(by_serial_, c.serial, c);
        put(class_names_, c.class_id, c.name_id);
        return;
    }
    case record_tag::frame: {
        if (!r.has(8 + 4 * id)) {
            problems_.add(short_record(rec));
            return;
        }
        std::uint64_t fid = r.id();
        frame_info f;
        f.method_name_id = r.id();
        f.signature_id = r.id();
        f.source_file_id = r.id();
        f.class_serial = r.u4();
        f.line = static_cast<std::int32_t>(r.u4());
        put(frames_, fid, f);
        return;
    }
    case record_tag::trace: {
        if (!r.has(12)) {
            problems_.add(short_record(rec));
            return;
        }
        trace_info t;
        t.serial = r.u4();
        t.thread_serial = r.u4();
        std::uint32_t n = r.u4();
        if (!r.has(std::size_t{n} * id)) {
            problems_.add(short_record(rec));
            return;
        }
        t.frame_ids = r.take(std::size_t{n} * id);
        put(trace_by_serial_, t.serial, static_cast<std::uint32_t>(traces_.size()));
        traces_.push_back(t);
        return;
    }
    case record_tag::start_thread: {
        if (!r.has(8 + 4 * id)) {
            problems_.add(short_record(rec));
            return;
        }
        started_thread t;
        t.serial = r.u4();
        t.object_id = r.id();
        t.trace_serial = r.u4();
        t.name_id = r.id();
        t.group_name_id = r.id();
        t.parent_group_name_id = r.id();
        started_threads_.push_back(t);
        return;
    }
    case record_tag::heap_dump:
        dump_starts_.push_back(heap_records_.size());
        heap_records_.push_back(rec);
        dump_open_ = false;
        return;
    case record_tag::heap_dump_segment:
        if (!dump_open_) dump_starts_.push_back(heap_records_.size());
        heap_records_.push_back(rec);
        dump_open_ = true;
        return;
    case record_tag::alloc_sites:
    case record_tag::heap_summary:
    case record_tag::cpu_samples:
    case record_tag::control_settings: legacy_records_.push_back(rec); return;
    case record_tag::unload_class:
    case record_tag::end_thread: return;
    case record_tag::heap_dump_end: dump_open_ = false; return;
    }
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", rec.tag);
    problems_.add({error_code::unknown_tag,
                   std::string("unknown top-level record tag ") + hex + " skipped (" + std::to_string(rec.body.size()) +
                       " bytes)",
                   rec.offset});
}

std::string_view record_index::utf8(std::uint64_t id) const {
    const std::string_view* s = utf8_.find(id);
    return s ? *s : std::string_view{};
}

std::string_view record_index::class_name(std::uint64_t class_id) const {
    const std::uint64_t* name = class_names_.find(class_id);
    return name ? utf8(*name) : std::string_view{};
}

const trace_info* record_index::trace(std::uint32_t serial) const {
    const std::uint32_t* i = trace_by_serial_.find(serial);
    return i ? &traces_[*i] : nullptr;
}

}  // namespace hprof
}  // namespace heapd
