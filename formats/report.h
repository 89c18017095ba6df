#pragma once
// The analysis report: plain data that heapd fills, sends as JSON, and heapctl renders.
// It depends on nothing but the standard library, so the wire layer can carry it alone.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace heapd {

// A histogram row: one class (arrays of a primitive type count as one class).
struct histogram_entry {
    std::uint64_t class_id = 0;  // 0 for primitive arrays whose class has no CLASS_DUMP
    std::string class_name;      // Java source form
    std::uint64_t instances = 0;
    std::uint64_t shallow_bytes = 0;
};

// One object among the largest by shallow size.
struct object_entry {
    std::uint64_t id = 0;
    std::uint64_t class_id = 0;
    std::string class_name;
    std::uint64_t shallow_bytes = 0;
    std::uint64_t length = 0;  // elements, for arrays
    bool is_array = false;
};

// A thread with its Java stack, innermost frame first.
struct thread_report {
    std::string name;
    std::string state;
    std::optional<bool> daemon;
    std::vector<std::string> frames;
};

// Facts about the dump as a whole.
struct summary_report {
    std::string file;
    std::uint64_t file_bytes = 0;
    std::string format;
    unsigned id_size = 0;
    std::uint64_t timestamp_ms = 0;
    std::string layout;  // the VM's object layout that sizes are computed for
    bool layout_inferred = false;  // true when object addresses confirmed it, false when assumed
    std::uint64_t instances = 0, object_arrays = 0, primitive_arrays = 0, classes = 0;
    std::uint64_t shallow_bytes = 0;
    std::vector<std::pair<std::string, std::uint64_t>> records;     // top-level record counts by name
    std::vector<std::pair<std::string, std::uint64_t>> subrecords;  // heap sub-record counts by name
    std::vector<std::pair<std::string, std::uint64_t>> gc_roots;    // root counts by kind
};

// One row of the old agent's allocation sites table.
struct alloc_site_report {
    std::string class_name;
    std::uint32_t trace_serial = 0;
    std::uint64_t live_bytes = 0, live_instances = 0, allocated_bytes = 0, allocated_instances = 0;
};

// The old hprof agent's profiling records, when the dump has them.
struct legacy_report {
    std::uint64_t sites_total_live_bytes = 0, sites_total_live_instances = 0;
    std::vector<alloc_site_report> alloc_sites;  // by live bytes, descending
    std::uint64_t cpu_total_samples = 0;
    std::vector<std::pair<std::uint64_t, std::string>> cpu_samples;  // (samples, top frame), descending
    std::optional<std::pair<std::uint64_t, std::uint64_t>> heap_summary_live;  // (bytes, instances)
    std::optional<std::pair<std::uint64_t, std::uint64_t>> heap_summary_allocated;
    std::optional<std::uint32_t> control_flags;
    std::optional<std::uint32_t> control_stack_depth;
    bool empty() const {
        return alloc_sites.empty() && cpu_samples.empty() && !heap_summary_live && !control_flags;
    }
};

// An object that keeps others alive, with what it retains.
struct dominator_entry {
    std::uint64_t id = 0;
    std::string class_name;
    std::uint64_t shallow_bytes = 0;
    std::uint64_t retained_bytes = 0;
};

// What the instances of one class retain together (nested instances counted once).
struct retained_class_entry {
    std::string class_name;
    std::uint64_t retained_bytes = 0;
};

// The dominator tree's findings: biggest retainers, retention by class, and reachability.
struct retention_report {
    bool computed = false;
    std::uint64_t reachable_objects = 0, reachable_bytes = 0;
    std::uint64_t unreachable_objects = 0, unreachable_bytes = 0;
    std::vector<dominator_entry> dominators;               // by retained bytes, descending
    std::vector<retained_class_entry> retained_by_class;   // by retained bytes, descending
};

// Something in the dump that could not be read; truncation is expected of dying JVMs.
struct problem_report {
    std::string message;
    std::uint64_t offset = 0;
    bool truncation = false;
};

// A group of java.lang.String objects with the same contents.
struct duplicate_string_entry {
    std::string content;             // for display: at most 50 characters, escaped, "..." when cut
    std::uint64_t length = 0;        // characters (UTF-16 units) of the whole string
    std::uint64_t copies = 0;        // String objects with these contents
    std::uint64_t saving_bytes = 0;  // what keeping one String and one value array would save
};

// The hash maps or lists of one class, and how many hold nothing or little in a big backing array.
struct collection_waste_entry {
    std::string class_name;
    std::uint64_t count = 0;         // instances
    std::uint64_t empty = 0;         // size 0 with a backing array of length > 0
    std::uint64_t sparse = 0;        // size below a quarter of the backing array's length
    std::uint64_t saving_bytes = 0;  // backing array bytes beyond what the entries need
};

// The instances of one box class (java.lang.Integer, ...) and the values they hold.
struct boxed_waste_entry {
    std::string class_name;
    std::uint64_t count = 0, bytes = 0, distinct_values = 0;
    std::uint64_t saving_bytes = 0;  // the boxes beyond one per distinct value
};

// The primitive arrays of one element type whose elements are all zero; their bytes are the saving.
struct zero_array_entry {
    std::string class_name;  // "long[]"
    std::uint64_t count = 0, bytes = 0;
};

// Bytes the heap could do without, by kind; see formats/waste.h for how each saving is counted.
struct waste_report {
    bool computed = false;
    std::uint64_t saving_bytes = 0;  // all four kinds together
    std::uint64_t duplicate_string_groups = 0, duplicate_strings = 0, duplicate_string_saving = 0;
    std::vector<duplicate_string_entry> duplicate_strings_top;  // by saving, descending
    std::uint64_t collection_saving = 0;
    std::vector<collection_waste_entry> collections;  // by saving, descending
    std::uint64_t boxed_saving = 0;
    std::vector<boxed_waste_entry> boxed;  // by saving, descending
    std::uint64_t zero_array_saving = 0;
    std::vector<zero_array_entry> zero_arrays;  // by bytes, descending
};

// Everything `heapd analyze` tells about one dump.
struct analysis_report {
    summary_report summary;
    std::vector<histogram_entry> histogram;  // by shallow bytes, descending
    std::vector<object_entry> largest_objects;
    std::vector<thread_report> threads;
    legacy_report legacy;
    retention_report retention;
    std::vector<problem_report> problems;
    waste_report waste;
};

} // namespace heapd
