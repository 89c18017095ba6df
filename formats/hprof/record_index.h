#pragma once
// One pass over the top-level records: names, classes, frames, traces, threads and where the heap is.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "formats/hprof/hprof_reader.h"
#include "formats/hprof/id_map.h"
#include "formats/hprof/problem_list.h"

namespace heapd {
inline namespace hprof {

// A LOAD_CLASS record: serial, class object id, trace, and the UTF8 id of its name.
struct loaded_class {
    std::uint32_t serial = 0;
    std::uint64_t class_id = 0;
    std::uint32_t trace_serial = 0;
    std::uint64_t name_id = 0;
};

// A FRAME record: method, signature, source file (UTF8 ids), class serial and line.
struct frame_info {
    std::uint64_t method_name_id = 0;
    std::uint64_t signature_id = 0;
    std::uint64_t source_file_id = 0;
    std::uint32_t class_serial = 0;
    std::int32_t line = 0;  // >0 line, 0 none, -1 unknown, -2 compiled, -3 native
};

// A TRACE record: serial, thread serial and a view of its frame ids.
struct trace_info {
    std::uint32_t serial = 0;
    std::uint32_t thread_serial = 0;
    std::span<const std::byte> frame_ids;  // frame count × id_size bytes
};

// A START_THREAD record (written by the old hprof agent).
struct started_thread {
    std::uint32_t serial = 0;
    std::uint64_t object_id = 0;
    std::uint32_t trace_serial = 0;
    std::uint64_t name_id = 0;
    std::uint64_t group_name_id = 0;
    std::uint64_t parent_group_name_id = 0;
};

// Which of the heap dumps in a file an index walks: 1 for the first, 2 for the second, and so on.
inline constexpr unsigned last_heap_dump = 0;     // the last one in the file (the default)
inline constexpr unsigned every_heap_dump = ~0u;  // all of them, as one (heapd strip)

// Everything the top-level records say, indexed; views point into the dump's bytes.
class record_index {
public:
    // Walks every top-level record once. Fails only if the header region itself is unusable;
    // damage further on is kept in problems() and the index holds what came before it. The heap
    // records are those of the heap dump that dump names (see heap_dump_count).
    static record_index build(const hprof_reader& reader, unsigned dump = last_heap_dump);

    unsigned id_size() const { return id_size_; }
    const std::array<std::uint64_t, 256>& record_counts() const { return record_counts_; }
    std::uint64_t count(record_tag t) const { return record_counts_[static_cast<std::uint8_t>(t)]; }

    // The UTF8 string with this id, or "" when absent.
    std::string_view utf8(std::uint64_t id) const;
    // The name (as written: usually slash form) of the class with this object id, or "".
    std::string_view class_name(std::uint64_t class_id) const;
    const loaded_class* class_by_serial(std::uint32_t serial) const { return by_serial_.find(serial); }
    const frame_info* frame(std::uint64_t frame_id) const { return frames_.find(frame_id); }
    const trace_info* trace(std::uint32_t serial) const;
    const std::vector<trace_info>& traces() const { return traces_; }
    const std::vector<loaded_class>& classes() const { return classes_; }
    const std::vector<started_thread>& started_threads() const { return started_threads_; }

    // Heap dump records (HEAP_DUMP and HEAP_DUMP_SEGMENT) of the chosen heap dump, in file order;
    // none when the file holds no dump of that number.
    std::span<const hprof_record> heap_records() const {
        return std::span<const hprof_record>(heap_records_).subspan(dump_begin_, dump_size_);
    }
    // The heap dumps in the file. Each HEAP_DUMP record is one, and so is each run of
    // HEAP_DUMP_SEGMENT records up to a HEAP_DUMP_END: the old hprof agent adds one to the file each
    // time it dumps, with the same UTF8 and LOAD_CLASS records for all.
    std::size_t heap_dump_count() const { return dump_starts_.size(); }
    // The number of the chosen heap dump (1 for the first); 0 for every_heap_dump or none.
    unsigned heap_dump_number() const { return dump_number_; }
    // Records of the old hprof agent, kept whole for their decoders.
    const std::vector<hprof_record>& legacy_records() const { return legacy_records_; }

    // What could not be read: truncation, damaged or unknown records. Empty for a sound dump; at
    // most problem_list::max_kept, the rest only counted (problems_omitted).
    const std::vector<error_info>& problems() const { return problems_.kept(); }
    std::uint64_t problems_omitted() const { return problems_.omitted(); }
    // True when the file ends inside a record (a dump cut short).
    bool truncated() const { return truncated_; }

private:
    void add(const hprof_record& rec);

    unsigned id_size_ = 8;
    std::array<std::uint64_t, 256> record_counts_{};
    id_map<std::string_view> utf8_;
    id_map<std::uint64_t> class_names_;  // class object id -> name id
    id_map<loaded_class> by_serial_;
    id_map<frame_info> frames_;
    id_map<std::uint32_t> trace_by_serial_;  // serial -> index in traces_
    std::vector<trace_info> traces_;
    std::vector<loaded_class> classes_;
    std::vector<started_thread> started_threads_;
    std::vector<hprof_record> heap_records_;      // of every heap dump
    std::vector<std::size_t> dump_starts_;        // where each heap dump's records start in heap_records_
    bool dump_open_ = false;                      // a run of segments without its HEAP_DUMP_END yet
    std::size_t dump_begin_ = 0, dump_size_ = 0;  // the chosen dump's records in heap_records_
    unsigned dump_number_ = 0;
    std::uint64_t definitions_end_ = ~std::uint64_t{0};  // records from here on define for later dumps only
    std::vector<hprof_record> legacy_records_;
    problem_list problems_;
    bool truncated_ = false;
};

}  // namespace hprof
}  // namespace heapd
