#pragma once
// The histogram pass: one walk over the heap that counts objects per class, GC roots and
// sub-records, infers the VM's object layout, and keeps the largest objects.
// Memory grows with the number of classes (and top_objects), never with the number of objects.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/stripped_check.h"
#include "formats/hprof/class_table.h"
#include "formats/hprof/heap_records.h"
#include "formats/hprof/object_layout.h"
#include "formats/hprof/record_index.h"
#include "formats/report/report.h"

namespace heapd {
inline namespace analysis {

// Where an Android dump switches heap: from this sub-record offset on, objects are in heap `heap`.
struct heap_run {
    std::uint64_t offset = 0;
    unsigned heap = 0;  // index into census_result::heaps
};

// What the histogram pass found.
struct census_result {
    std::string layout;                 // the inferred object layout, for people
    std::uint64_t layout_evidence = 0;  // adjacent-object pairs that confirmed it
    bool layout_inferred = false;       // the evidence decided; otherwise the most common was assumed
    std::uint64_t instances = 0;
    std::uint64_t object_arrays = 0;
    std::uint64_t primitive_arrays = 0;
    std::uint64_t classes = 0;
    std::uint64_t shallow_bytes = 0;
    std::uint64_t string_instances = 0,
                  text_arrays = 0;  // java.lang.String; byte[] and char[] (room for the waste pass)
    // Objects of every kind, classes included: at least the object graph's nodes.
    std::uint64_t object_count() const { return instances + object_arrays + primitive_arrays + classes; }
    std::array<std::uint64_t, root_kind_count> roots{};
    std::array<std::uint64_t, 256> subrecord_counts{};
    std::vector<histogram_entry> histogram;           // by shallow bytes, descending
    std::vector<object_entry> largest;                // by shallow bytes, descending
    std::vector<root_view> thread_roots;              // ROOT_THREAD_OBJECT records, in dump order
    const vm_layout* vm = nullptr;                    // the layout sizes were computed for
    field_rules rules;                                // the Java release whose field layout sized instances
    std::string rules_source;                         // what told the release: "object addresses", ...
    std::uint64_t rules_agree = 0;                    // classes whose instances' room in memory the rules match exactly
    std::uint64_t rules_measured = 0;                 // classes with an instance followed by another object
    id_map<std::uint32_t> instance_sizes;             // class id -> bytes of one instance, for classes with instances
    id_map<std::uint32_t> mirror_sizes;               // class id -> bytes of its java.lang.Class object
    stripped_state stripped;                          // primitive array contents zeroed (heapd strip)
    std::vector<std::uint64_t> inferred_class_roots;  // classes taken as roots (class_roots.h), set after the walk
    // Android's heaps (HEAP DUMP INFO: app, image, zygote), in order of first appearance, with the
    // objects and bytes of each; empty for a dump without them. Histogram rows then count their
    // instances per heap (heap_instances, in this order).
    std::vector<heap_entry> heaps;
    std::vector<heap_run> heap_runs;  // by offset
};

// Visitor for walk_heap; call finish() after the walk.
class heap_census : public heap_visitor {
public:
    heap_census(const record_index& idx, class_table& classes, unsigned top_objects);

    void root(const root_view& r) {
        ++roots_[static_cast<unsigned>(r.kind)];
        ++subrecords_[0xFF & tag_of(r.kind)];
        if (r.kind == root_kind::thread_object) thread_roots_.push_back(r);
    }
    void class_dump(const class_dump_view& c) {
        ++subrecords_[0x20];
        classes_->add(c);
        if (!heap_names_.empty()) class_heaps_.emplace_back(c.class_id(), heap_);
    }
    void instance(const instance_view& v);
    void object_array(const object_array_view& v);
    void primitive_array(const primitive_array_view& v);
    void heap_info(const heap_info_view& h);

    census_result finish();

    static constexpr unsigned max_heaps = 4;  // Android's default, app, image, zygote; more share the last

private:
    stripped_check stripped_;
    // Per-class running totals; arrays keep their exact bytes under every candidate layout.
    struct class_acc {
        std::uint64_t class_id = 0;
        std::uint64_t instances = 0;
        std::array<std::uint64_t, 2> min_gap{~std::uint64_t{0}, ~std::uint64_t{0}};  // to the next object up, down
        std::array<std::uint64_t, max_candidate_layouts> array_bytes{};
        std::vector<std::uint64_t> first_ids;  // up to top_ instance ids, for the largest list
        std::uint8_t kind = 0;                 // 0 instance, 1 object array, 2 primitive array
        std::uint8_t prim_type = 0;
        std::array<std::uint64_t, max_heaps> heap_instances{};  // per Android heap
    };
    // A candidate for the largest objects under one layout.
    struct big_array {
        std::uint64_t bytes, id, acc, length;
        bool operator>(const big_array& o) const { return bytes != o.bytes ? bytes > o.bytes : id < o.id; }
    };

    static std::uint8_t tag_of(root_kind k);
    // How neighbours measured sizes: the direction the dump runs in, and whether gaps are sizes at all.
    struct gap_evidence {
        unsigned direction = 0;  // 0 ascending addresses, 1 descending
        bool gaps_are_sizes = false;
    };
    void choose_field_rules(const vm_layout& layout, gap_evidence gaps, census_result& r) const;
    // The layout under which most arrays end where the next object starts (index into layouts_).
    std::size_t choose_layout(census_result& r, gap_evidence& gaps) const;
    // The histogram's rows, the instance sizes and the largest instances (into candidates).
    void histogram_rows(census_result& r, layout_model& model, std::size_t layout, gap_evidence gaps,
                        std::vector<object_entry>& candidates) const;
    // One java.lang.Class object per CLASS_DUMP: its mirror, statics included.
    void class_mirrors(census_result& r, layout_model& model) const;
    // Android's heaps: each one's objects and bytes, and each histogram row's instances per heap.
    void heap_totals(census_result& r, std::size_t layout) const;
    // The largest objects: the instances gathered and the biggest arrays under the layout.
    void largest_objects(census_result& r, std::size_t layout, std::vector<object_entry> candidates) const;
    std::uint32_t acc_for(std::uint64_t class_id, std::uint8_t kind);
    void see_object(std::uint64_t id, std::uint32_t acc, const std::uint64_t* array_sizes);
    void offer_big(std::uint64_t id, std::uint32_t acc, std::uint32_t length, const std::uint64_t* sizes);

    class_table* classes_;
    unsigned top_;
    unsigned id_size_;
    std::span<const vm_layout> layouts_;
    std::vector<class_acc> accs_;
    id_map<std::uint32_t> acc_by_class_;
    std::array<std::uint32_t, 12> prim_acc_{};  // acc index + 1 per primitive type, 0 when none
    std::uint64_t last_class_ = ~std::uint64_t{0};
    std::uint32_t last_acc_ = 0;
    // The previous object in dump order, for adjacency evidence.
    std::uint64_t prev_id_ = 0;
    std::uint32_t prev_acc_ = 0;
    bool prev_is_array_ = false;
    std::array<std::uint64_t, max_candidate_layouts> prev_sizes_{};
    // Array neighbours whose distance is the array's size, per direction of the dump (up, down).
    std::array<std::array<std::uint64_t, max_candidate_layouts>, 2> fits_{};
    std::array<std::uint64_t, 2> array_pairs_{};
    std::array<std::vector<big_array>, max_candidate_layouts> big_;  // min-heaps of size top_
    std::array<std::uint64_t, root_kind_count> roots_{};
    // Android's heaps: names by index, the heap of the records being read, where it changes, the
    // heap of each class, and array bytes per heap under every candidate layout.
    const record_index* idx_;
    std::vector<std::uint32_t> heap_types_;
    std::vector<std::string> heap_names_;
    unsigned heap_ = 0;
    std::vector<heap_run> heap_runs_;
    std::vector<std::pair<std::uint64_t, unsigned>> class_heaps_;
    std::array<std::array<std::uint64_t, max_candidate_layouts>, max_heaps> heap_array_bytes_{};
    std::array<std::uint64_t, 256> subrecords_{};
    std::vector<root_view> thread_roots_;
};

}  // namespace analysis
}  // namespace heapd
