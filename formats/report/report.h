#pragma once
// The analysis report: plain data that heapd fills, sends as JSON, and heapctl renders.
// It depends on nothing but the standard library, so the wire layer can carry it alone.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace heapd {
inline namespace report {

// A histogram row: one class (arrays of a primitive type count as one class).
struct histogram_entry {
    std::uint64_t class_id = 0;  // 0 for primitive arrays whose class has no CLASS_DUMP
    std::string class_name;      // Java source form
    std::uint64_t instances = 0;
    std::uint64_t shallow_bytes = 0;
    // Of those, reached by strong references from a GC root (when the object graph was made).
    std::uint64_t reachable_instances = 0, reachable_bytes = 0;
    std::vector<std::uint64_t> heap_instances = {};  // per heap of summary_report::heaps (Android), else empty
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
    std::uint64_t id = 0;  // the Thread object, 0 when the dump names none
};

// One of an Android dump's heaps (HEAP DUMP INFO): app, image, zygote.
struct heap_entry {
    std::string name;
    std::uint64_t objects = 0, shallow_bytes = 0;
};

// Facts about the dump as a whole.
struct summary_report {
    std::string file;
    std::uint64_t file_bytes = 0;
    std::string format;
    unsigned id_size = 0;
    std::uint64_t timestamp_ms = 0;
    std::string layout;                      // the VM's object layout that sizes are computed for
    bool layout_inferred = false;            // true when object addresses confirmed it, false when assumed
    std::string field_rules;                 // whose field layout sized instances: "JDK 8", "JDK 15 and later"
    std::string field_rules_source;          // what told it: "object addresses", "the fields of java.lang.String"
    std::uint64_t field_rules_agree = 0;     // classes whose instances' room in memory the rules match
    std::uint64_t field_rules_measured = 0;  // classes with an instance followed by another object
    std::string writer;            // "HotSpot heap dumper", "serviceability agent", "hprof agent", "Android runtime"
    std::string java_version;      // as the dump's JVM kept it ("17.0.15+6-Debian-1deb12u1"), or a range
    std::string java_runtime;      // "OpenJDK Runtime Environment", "" when unknown
    std::string version_source;    // where java_version was read ("java.lang.VersionProps")
    std::uint64_t heap_dumps = 0;  // heap dumps in the file (the old hprof agent writes several)
    std::uint64_t class_roots_inferred = 0;  // classes taken as roots: the dump marks none (class_roots.h)
    unsigned dump_number = 0;                // the one analyzed, 1 for the first
    bool stripped = false;                   // primitive arrays zeroed (heapd strip): no arrays of zeros counted
    bool strings_stripped = false;           // char[] and byte[] too: no string contents, thread names or duplicates
    std::uint64_t instances = 0, object_arrays = 0, primitive_arrays = 0, classes = 0;
    std::uint64_t shallow_bytes = 0;
    std::vector<std::pair<std::string, std::uint64_t>> records;     // top-level record counts by name
    std::vector<std::pair<std::string, std::uint64_t>> subrecords;  // heap sub-record counts by name
    std::vector<std::pair<std::string, std::uint64_t>> gc_roots;    // root counts by kind
    std::vector<heap_entry> heaps;  // Android's heaps, in the dump's order; empty for other dumps
    std::string heap_focus;         // the heap suspects and retainers speak of ("app"), "" for all
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
    std::vector<std::pair<std::uint64_t, std::string>> cpu_samples;            // (samples, top frame), descending
    std::optional<std::pair<std::uint64_t, std::uint64_t>> heap_summary_live;  // (bytes, instances)
    std::optional<std::pair<std::uint64_t, std::uint64_t>> heap_summary_allocated;
    std::optional<std::uint32_t> control_flags;
    std::optional<std::uint32_t> control_stack_depth;
    bool empty() const { return alloc_sites.empty() && cpu_samples.empty() && !heap_summary_live && !control_flags; }
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

// One object on a path from a GC root, and how it holds the next one.
struct path_step {
    std::uint64_t id = 0;
    std::string class_name;    // "class NAME" for class objects
    bool is_class = false;     // a class object (its statics hold the next step)
    std::string field;         // instance or static field name, or "[i]" for an array element; "" at the end
    std::uint64_t repeat = 1;  // a run of steps of the same class through the same field (a chain)
};

// A shortest strong path from a GC root: the root's kinds, then the steps, root first.
struct gc_path {
    std::vector<std::string> root_kinds;
    std::vector<path_step> steps;
    std::uint64_t length = 0;  // references followed (repeats counted)
};

// `heapd path`: an object and its shortest strong paths from different GC roots.
struct object_paths_report {
    std::string file;
    std::uint64_t id = 0;
    std::string class_name;
    std::uint64_t shallow_bytes = 0;
    std::uint64_t retained_bytes = 0;
    bool reachable = false;
    bool is_array = false;
    std::uint64_t length = 0;    // elements, for an array
    std::vector<gc_path> paths;  // shortest first, each from a different root
};

// Objects of one class among the things a leak suspect keeps alive.
struct accumulated_class {
    std::string class_name;
    std::uint64_t count = 0;
    std::uint64_t retained_bytes = 0;
};

// Where live objects of one class were allocated, from heapd's allocation-sampling agent (agent/)
// joined to the dump by class name (formats/sites/sites_join.h): a site's estimated live bytes and
// objects, and its share of the class's sampled live bytes.
struct allocation_site_entry {
    std::string class_name;
    std::string origin;               // the first frame outside the JDK, else the allocating frame
    std::vector<std::string> frames;  // allocating frame first: "java.util.HashMap.newNode(HashMap.java:1901)"
    std::uint64_t live_bytes = 0, live_objects = 0;
    double share = 0;
};

// The allocation profile a report was joined with: which agent, how it sampled.
struct allocation_profile_facts {
    bool joined = false;
    std::string agent;          // its version
    std::int64_t interval = 0;  // bytes between samples, on average, per thread
    double seconds = 0;         // sampled for
    std::uint64_t samples = 0;
};

// An object, or the instances of a class, retaining a large share of the reachable heap.
struct leak_suspect {
    bool is_class = false;        // instances of one class together, no single one large
    dominator_entry suspect;      // the object (for a class: its biggest instance)
    std::uint64_t instances = 0;  // for a class: its instances counted
    std::uint64_t retained_bytes = 0;
    double share = 0;                            // of the reachable bytes
    dominator_entry accumulation;                // where the memory accumulates (below the suspect)
    std::uint64_t chain_length = 0;              // > 1: the accumulation point heads a chain of its class
    std::vector<accumulated_class> accumulated;  // the accumulation point's children by class
    std::vector<accumulated_class> held_by;      // for a class: its instances' dominators by class
    std::vector<dominator_entry> biggest;        // for a class: its instances retaining most (up to 5)
    gc_path path;                                // from a GC root to the accumulation point
    // Where the suspect's class (for a class) and the accumulated classes were allocated, when the
    // report was joined with an allocation profile; by class, then by live bytes.
    std::vector<allocation_site_entry> allocated_at;
};

// An object an app gave LeakCanary to watch (a KeyedWeakReference: its key, its description, the
// object as referent) that is still in the heap: LeakCanary's own evidence that it should be gone.
struct watched_object {
    std::string key, description;
    dominator_entry object;  // the watched object; retained bytes as the other retainers'
    bool reachable = false;  // strong references from a GC root hold it
    // Every chain found (up to a few roots) starts at a Binder that a JNI global root holds: the
    // system process's handle on a service, which LeakCanary does not count as a leak.
    bool only_binder_held = false;
    gc_path path;  // the shortest, when reachable
};

// A node of the dominator tree as a report draws it: an object, or, when others > 0, those of a shown
// node's children too small to show, together (analysis/dominator_outline.h).
struct tree_node {
    std::uint64_t id = 0;    // 0 for the others
    std::string class_name;  // "class NAME" for class objects; for the others their class, "" when mixed
    std::uint64_t shallow_bytes = 0, retained_bytes = 0;
    std::int64_t parent = -1;  // index of the parent among the nodes (earlier), -1: a child of the whole heap
    std::uint64_t others = 0;  // objects stood for
};

// The dominator tree's findings: biggest retainers, retention by class, and reachability.
struct retention_report {
    bool computed = false;
    std::uint64_t reachable_objects = 0, reachable_bytes = 0;
    std::uint64_t unreachable_objects = 0, unreachable_bytes = 0;
    // Of the unreachable, the collector's filler objects (analysis/fillers.h).
    std::uint64_t filler_objects = 0, filler_bytes = 0;
    std::uint64_t root_objects = 0;  // distinct objects that are GC roots
    // With a heap focus (Android, summary_report::heap_focus): that heap's reachable bytes, which
    // retained sizes and shares then speak of.
    std::uint64_t focus_bytes = 0;
    std::uint64_t share_base() const { return focus_bytes != 0 ? focus_bytes : reachable_bytes; }
    std::vector<dominator_entry> dominators;              // by retained bytes, descending
    std::vector<retained_class_entry> retained_by_class;  // by retained bytes, descending
    double suspect_threshold = 0;                         // share of the reachable bytes
    std::vector<leak_suspect> leak_suspects;              // by retained bytes, descending
    std::vector<watched_object> watched;                  // LeakCanary's watched objects still in the heap
    // The tree cut for a picture: nodes retaining at least tree_min_share of the reachable bytes,
    // biggest first, parents before children (analysis/dominator_outline.h).
    double tree_min_share = 0;
    std::vector<tree_node> tree;
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

// Bytes the heap could do without, by kind; see analysis/waste.h for how each saving is counted.
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

// Objects of one kind held along paths of one shape from one GC root (the same root, the same
// classes at each step; array indices and ids may differ): how many, what they stand for, and the
// path to one of them as an example.
struct holder_group {
    std::uint64_t count = 0;
    std::uint64_t bytes = 0;  // direct buffers: their capacity; class loaders: what they retain
    gc_path path;             // to one of them, root first, the object itself last
};

// java.nio's direct buffers: the native memory behind them, and who holds them. Sorted by kind from
// the fields every JDK since 6 keeps (cleaner, att, fd).
struct direct_buffer_report {
    std::uint64_t allocated = 0, allocated_bytes = 0;      // reachable, owning native memory (allocateDirect)
    std::uint64_t mapped = 0, mapped_bytes = 0;            // reachable, mapping a file (FileChannel.map)
    std::uint64_t views = 0;                               // slices and duplicates: another buffer's memory
    std::uint64_t foreign = 0, foreign_bytes = 0;          // wrapping native code's memory (JNI NewDirectByteBuffer)
    std::uint64_t unreachable = 0, unreachable_bytes = 0;  // owning, but garbage: freed after a GC
    // java.nio.Bits's own account (count, capacity, reserved and the limit), when the dump holds it.
    std::optional<std::uint64_t> jvm_count, jvm_capacity_bytes, jvm_reserved_bytes, jvm_max_bytes;
    std::vector<holder_group> holders;  // reachable owning buffers (allocated and mapped), by bytes
};

// Threads with one name pattern ("worker-#": runs of digits as #) or one stack.
struct thread_group {
    std::string key;  // the pattern, or the stack's innermost and outermost frames
    std::uint64_t count = 0;
    std::string example;              // one thread's name
    std::vector<std::string> frames;  // one thread's stack, innermost first (at most 8 frames)
};

// The threads as a whole: how many, in which states, grouped, and who holds their Thread objects.
struct thread_summary_report {
    std::uint64_t count = 0, daemon = 0;
    std::vector<std::pair<std::string, std::uint64_t>> states;  // by count, descending
    std::vector<thread_group> by_name;                          // by count, descending
    std::vector<thread_group> by_stack;                         // by count, descending
    std::vector<holder_group> holders;  // references besides the JVM's own (thread groups), by count
};

// The class loaders of one class ("java.net.URLClassLoader") and the classes they defined.
struct loader_class_entry {
    std::string class_name;
    std::uint64_t loaders = 0, classes = 0;
};

// A class name that more than one loader defined: a copy per loader in metaspace.
struct duplicate_class_entry {
    std::string class_name;
    std::uint64_t loaders = 0;
};

// Class loaders: how many, what they defined, classes defined more than once, who keeps them.
struct class_loader_report {
    std::uint64_t loaders = 0;                      // objects that defined classes (the boot loader is not one)
    std::uint64_t classes = 0;                      // classes the dump holds
    std::uint64_t boot_classes = 0;                 // of those, defined by the boot loader
    std::uint64_t unreachable = 0;                  // loaders no strong path reaches: unloaded at a GC
    std::vector<loader_class_entry> by_class;       // by loaders, descending
    std::uint64_t duplicated_classes = 0;           // names defined by more than one loader
    std::vector<duplicate_class_entry> duplicates;  // by loaders, descending
    std::vector<holder_group> holders;              // reachable loaders, by count
};

// One of Android's Bitmaps: its size in pixels and the bytes its pixels take.
struct bitmap_entry {
    std::uint64_t id = 0;
    std::uint32_t width = 0, height = 0;
    std::uint64_t pixel_bytes = 0;
    bool in_heap = false;  // the pixels are a byte[] of the heap (Android 7 and older), else native
};

// Android's Bitmaps and their pixels: a byte[] in the heap (mBuffer, Android 7 and older) or native
// memory (Android 8 and later), which the heap does not show: width × height × 4 bytes (ARGB_8888)
// is assumed for those.
struct bitmap_report {
    std::uint64_t heap = 0, heap_bytes = 0;                // reachable, pixels in the heap
    std::uint64_t native = 0, native_bytes = 0;            // reachable, pixels native (estimated)
    std::uint64_t recycled = 0;                            // reachable, recycled: no pixels
    std::uint64_t unreachable = 0, unreachable_bytes = 0;  // garbage: freed after a GC
    std::vector<bitmap_entry> largest;                     // reachable, by pixel bytes (up to 5)
    std::vector<holder_group> holders;                     // reachable, by pixel bytes
};

// What in the heap stands for memory outside it (docs/memory.md): direct buffers, threads (their
// stacks) and class loaders (metaspace), and Android's Bitmaps. Needs the object graph; thread
// groups do not.
struct off_heap_report {
    bool computed = false;  // direct buffers, loaders and holders (with the object graph)
    direct_buffer_report direct_buffers;
    bitmap_report bitmaps;
    thread_summary_report threads;
    class_loader_report class_loaders;
};

// Everything `heapd analyze` tells about one dump.
struct analysis_report {
    summary_report summary;
    std::vector<histogram_entry> histogram;  // by shallow bytes, descending
    std::vector<object_entry> largest_objects;
    std::vector<thread_report> threads;
    legacy_report legacy;
    retention_report retention;
    std::vector<problem_report> problems;  // at most problem_list::max_kept
    std::uint64_t problems_omitted = 0;    // found past that bound, counted only
    waste_report waste;
    allocation_profile_facts allocations;  // joined: the suspects say where their objects were allocated
    off_heap_report off_heap;
};

}  // namespace report
}  // namespace heapd

namespace heapd {
inline namespace report {

// One class's change between two dumps of the same JVM, matched by name (deltas are after - before,
// held at INT64_MIN/INT64_MAX when the true difference does not fit).
struct class_diff_entry {
    std::string class_name;
    std::uint64_t instances_before = 0, instances_after = 0;
    std::uint64_t shallow_before = 0, shallow_after = 0;
    std::uint64_t retained_before = 0, retained_after = 0;  // 0 unless diff_report::retained
    std::int64_t instances_delta = 0, shallow_delta = 0, retained_delta = 0;
    bool added = false;    // no instances before, some after ("new")
    bool removed = false;  // instances before, none after ("gone")
};

// The heap as a whole in one of the two dumps compared.
struct diff_side {
    std::string file;
    std::uint64_t timestamp_ms = 0;
    std::string layout;
    std::uint64_t objects = 0, shallow_bytes = 0, classes = 0;
    std::uint64_t reachable_objects = 0, reachable_bytes = 0;  // 0 unless diff_report::retained
};

// `heapd diff`: what changed per class between an earlier and a later dump, biggest growth first.
struct diff_report {
    diff_side before, after;
    bool retained = false;                 // retained sizes were computed for both dumps
    std::vector<class_diff_entry> grew;    // by growth, largest first (see analysis/dump_diff.h)
    std::vector<class_diff_entry> shrank;  // by shrinkage, largest first
    std::uint64_t grew_classes = 0, shrank_classes = 0, unchanged_classes = 0;  // before any cut to top
    std::vector<std::string> notes;  // why the two dumps may not compare well
};

}  // namespace report
}  // namespace heapd
