#include "analysis/census.h"

#include <algorithm>

#include "formats/hprof/java_names.h"

namespace heapd {
inline namespace analysis {
namespace {

// Gaps between neighbours larger than the field-layout size by at most this much are taken as the
// true size (fields the dump does not list); larger gaps are free space or an unlisted object.
constexpr std::uint64_t max_hidden_bytes = 16;
// Below this many classes measured by their neighbours, whether the heap is packed is not told.
constexpr std::uint64_t min_classes_to_tell_packed = 20;

char descriptor_of(std::uint8_t prim_type) {
    static constexpr char codes[12] = {0, 0, 0, 0, 'Z', 'C', 'F', 'D', 'B', 'S', 'I', 'J'};
    return prim_type < 12 ? codes[prim_type] : 0;
}

}  // namespace

heap_census::heap_census(const record_index& idx, class_table& classes, unsigned top_objects)
    : classes_(&classes),
      top_(top_objects),
      id_size_(idx.id_size()),
      layouts_(candidate_layouts(idx.id_size())),
      idx_(&idx) {}

void heap_census::heap_info(const heap_info_view& h) {
    ++subrecords_[0xFE];
    auto known = std::find(heap_types_.begin(), heap_types_.end(), h.heap_type);
    unsigned heap = static_cast<unsigned>(known - heap_types_.begin());
    if (known == heap_types_.end()) {
        if (heap_types_.size() < max_heaps) {
            heap_types_.push_back(h.heap_type);
            std::string name(idx_->utf8(h.name_id));
            heap_names_.push_back(name.empty() ? "heap " + std::to_string(h.heap_type) : name);
        }
        heap = static_cast<unsigned>(heap_types_.size() - 1);
    }
    if (heap_runs_.empty() || heap_runs_.back().heap != heap) heap_runs_.push_back({h.offset, heap});
    heap_ = heap;
}

std::uint8_t heap_census::tag_of(root_kind k) {
    static constexpr std::uint8_t tags[root_kind_count] = {0xFF, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                                                           0x08, 0x89, 0x8A, 0x8B, 0x8C, 0x8D, 0x8E, 0x90};
    return tags[static_cast<unsigned>(k)];
}

std::uint32_t heap_census::acc_for(std::uint64_t class_id, std::uint8_t kind) {
    if (!accs_.empty() && class_id == last_class_ && accs_[last_acc_].kind == kind) return last_acc_;
    if (const std::uint32_t* hit = acc_by_class_.find(class_id); hit != nullptr && accs_[*hit].kind == kind) {
        last_class_ = class_id;
        last_acc_ = *hit;
        return *hit;
    }
    auto [slot, inserted] = acc_by_class_.insert(class_id, static_cast<std::uint32_t>(accs_.size()));
    if (inserted) {
        accs_.emplace_back();
        accs_.back().class_id = class_id;
        accs_.back().kind = kind;
    }
    last_class_ = class_id;
    last_acc_ = *slot;
    return *slot;
}

// Neighbours in dump order tell sizes: the lower object of the pair ends where the higher one
// starts. Most dumpers write a region upwards; ZGC's writes each page downwards. Each direction
// keeps its own evidence, and the one with more fitting arrays is believed.
void heap_census::see_object(std::uint64_t id, std::uint32_t acc, const std::uint64_t* array_sizes) {
    auto measure = [&](unsigned dir, std::uint64_t gap, const std::uint64_t* sizes, std::uint32_t lower_acc) {
        if (sizes != nullptr) {
            ++array_pairs_[dir];
            for (std::size_t c = 0; c < layouts_.size(); ++c) fits_[dir][c] += sizes[c] == gap;
        } else {
            auto& a = accs_[lower_acc];
            a.min_gap[dir] = std::min(a.min_gap[dir], gap);
        }
    };
    if (prev_id_ != 0 && id > prev_id_)
        measure(0, id - prev_id_, prev_is_array_ ? prev_sizes_.data() : nullptr, prev_acc_);
    else if (prev_id_ != 0 && id < prev_id_)
        measure(1, prev_id_ - id, array_sizes, acc);
    prev_id_ = id;
    prev_acc_ = acc;
    prev_is_array_ = array_sizes != nullptr;
    if (array_sizes != nullptr)
        for (std::size_t c = 0; c < layouts_.size(); ++c) prev_sizes_[c] = array_sizes[c];
}

void heap_census::offer_big(std::uint64_t id, std::uint32_t acc, std::uint32_t length, const std::uint64_t* sizes) {
    if (top_ == 0) return;
    bool wanted = false;  // most arrays are smaller than every list's smallest: leave at once
    for (std::size_t c = 0; c < layouts_.size() && !wanted; ++c)
        wanted = big_[c].size() < top_ || sizes[c] >= big_[c].front().bytes;
    if (!wanted) return;
    auto greater = [](const big_array& a, const big_array& b) { return a > b; };
    for (std::size_t c = 0; c < layouts_.size(); ++c) {
        auto& heap = big_[c];
        big_array b{sizes[c], id, acc, length};
        if (heap.size() < top_) {
            heap.push_back(b);
            std::push_heap(heap.begin(), heap.end(), greater);
        } else if (b > heap.front()) {
            std::pop_heap(heap.begin(), heap.end(), greater);
            heap.back() = b;
            std::push_heap(heap.begin(), heap.end(), greater);
        }
    }
}

void heap_census::instance(const instance_view& v) {
    ++subrecords_[0x21];
    std::uint32_t acc = acc_for(v.class_id, 0);
    auto& a = accs_[acc];
    ++a.instances;
    ++a.heap_instances[heap_];
    if (a.first_ids.size() < top_) a.first_ids.push_back(v.id);
    see_object(v.id, acc, nullptr);
}

void heap_census::object_array(const object_array_view& v) {
    ++subrecords_[0x22];
    std::uint32_t acc = acc_for(v.class_id, 1);
    std::uint64_t sizes[max_candidate_layouts] = {};
    auto& a = accs_[acc];
    ++a.instances;
    ++a.heap_instances[heap_];
    for (std::size_t c = 0; c < layouts_.size(); ++c) {
        sizes[c] = array_shallow_size(layouts_[c], 2, v.length);
        a.array_bytes[c] += sizes[c];
        heap_array_bytes_[heap_][c] += sizes[c];
    }
    offer_big(v.id, acc, v.length, sizes);
    see_object(v.id, acc, sizes);
}

void heap_census::primitive_array(const primitive_array_view& v) {
    ++subrecords_[v.data.empty() && v.length != 0 ? 0xC3 : 0x23];
    stripped_.add(v);
    std::uint32_t acc;
    if (prim_acc_[v.type] != 0) {
        acc = prim_acc_[v.type] - 1;
    } else {
        acc = static_cast<std::uint32_t>(accs_.size());
        accs_.emplace_back();
        accs_.back().kind = 2;
        accs_.back().prim_type = v.type;
        prim_acc_[v.type] = acc + 1;
    }
    std::uint64_t sizes[max_candidate_layouts] = {};
    auto& a = accs_[acc];
    ++a.instances;
    ++a.heap_instances[heap_];
    for (std::size_t c = 0; c < layouts_.size(); ++c) {
        sizes[c] = array_shallow_size(layouts_[c], v.type, v.length);
        a.array_bytes[c] += sizes[c];
        heap_array_bytes_[heap_][c] += sizes[c];
    }
    offer_big(v.id, acc, v.length, sizes);
    see_object(v.id, acc, sizes);
}

// The release whose rules size instances. Where ids are addresses, the distance from an instance to
// the next object is its size for every class with an instance followed closely: the release
// whose rules match most such classes exactly wins (the guess from the classes' shape on a tie).
// Otherwise the guess stands: the old hprof agent, whose ids are not addresses, ran on JDK 8 and older.
void heap_census::choose_field_rules(const vm_layout& layout, gap_evidence gaps, census_result& r) const {
    const java_release_guess guess = guess_java_release(*classes_);
    r.rules = guess.java_feature != 0 ? field_rules{guess.java_feature} : field_rules{};
    r.rules_source = guess.java_feature != 0 ? "the fields of java.lang.String" : "nothing: the newest assumed";
    if (!gaps.gaps_are_sizes) return;
    // The guess first, so that it keeps a tie; each release tried once.
    const unsigned releases[] = {r.rules.java_feature, 8, 11, 17, field_rules::newest_known_java};
    std::uint64_t best_score = 0;
    unsigned best = r.rules.java_feature;
    for (std::size_t i = 0; i < std::size(releases); ++i) {
        const unsigned java = releases[i];
        if (i > 0 && java == releases[0]) continue;
        layout_model model(*classes_, layout, field_rules{java});
        std::uint64_t score = 0, measured = 0;
        for (const class_acc& a : accs_) {
            const std::uint64_t gap = a.min_gap[gaps.direction];
            if (a.kind != 0 || gap == ~std::uint64_t{0}) continue;
            ++measured;
            score += model.instance_size(a.class_id) == gap;
        }
        r.rules_measured = measured;
        if (score > best_score) best_score = score, best = java;
    }
    r.rules = field_rules{best};
    r.rules_agree = best_score;
    if (r.rules_measured > 0) r.rules_source = "object addresses";
}

std::size_t heap_census::choose_layout(census_result& r, gap_evidence& gaps) const {
    // Identifiers that are not addresses (the old hprof agent) fit none; then the most common
    // layout stands.
    // Compact headers only where the classes are of a release that has them (JDK 19 or later looks
    // alike to heapd, 24 brought them).
    const unsigned java = guess_java_release(*classes_).java_feature;
    auto most_fits = [&](unsigned dir) {
        std::size_t best = 0;
        for (std::size_t c = 1; c < layouts_.size(); ++c)
            if (fits_[dir][c] > fits_[dir][best] && java >= layouts_[c].first_java) best = c;
        return best;
    };
    const std::size_t up = most_fits(0), down = most_fits(1);
    gaps.direction = fits_[1][down] > fits_[0][up] ? 1 : 0;
    const std::size_t best = gaps.direction == 1 ? down : up;
    const auto& fits = fits_[gaps.direction];
    const std::uint64_t pairs = array_pairs_[gaps.direction];
    gaps.gaps_are_sizes = pairs > 0 && fits[best] * 2 >= pairs;
    r.layout = std::string(layouts_[best].name);
    r.layout_evidence = fits[best];
    r.layout_inferred = gaps.gaps_are_sizes;
    r.vm = &layouts_[best];
    return best;
}

void heap_census::histogram_rows(census_result& r, layout_model& model, std::size_t layout, gap_evidence gaps,
                                 std::vector<object_entry>& candidates) const {
    // Where the heap is packed (a compacting collector: the rules match at least three classes in
    // four, of enough classes to tell), an instance is never larger than the distance to the next
    // object, so a smaller gap overrules the field layout (a release whose facts heapd lacks). A
    // slightly larger gap is taken as fields the dump does not list, unless the heap is known not to
    // be packed: ZGC and Shenandoah leave the dead objects' room between live ones.
    const std::uint64_t header = model.layout().header_size;
    const bool told = r.rules_measured >= min_classes_to_tell_packed;
    const bool packed = r.rules_agree * 4 >= r.rules_measured * 3;
    auto instance_size = [&](const class_acc& a) -> std::uint64_t {
        std::uint64_t size = model.instance_size(a.class_id);
        const std::uint64_t gap = a.min_gap[gaps.direction];
        if (!gaps.gaps_are_sizes || gap % 8 != 0 || gap < header) return size;
        if ((gap < size && told && packed) || (gap > size && gap <= size + max_hidden_bytes && (packed || !told)))
            size = gap;
        return size;
    };
    for (const class_acc& a : accs_) {
        histogram_entry e;
        e.instances = a.instances;
        if (a.kind == 2) {
            std::string internal = {'[', descriptor_of(a.prim_type)};
            const class_info* c = classes_->find_by_name(internal);
            e.class_id = c ? c->id() : 0;
            e.class_name = std::string(primitive_name(a.prim_type)) + "[]";
        } else {
            e.class_id = a.class_id;
            e.class_name = classes_->java_name(a.class_id);
        }
        if (a.kind == 0) {
            std::uint64_t size = instance_size(a);
            r.instance_sizes.insert(a.class_id, static_cast<std::uint32_t>(size));
            e.shallow_bytes = size * a.instances;
            for (std::uint64_t id : a.first_ids) candidates.push_back({id, a.class_id, e.class_name, size, 0, false});
        } else {
            e.shallow_bytes = a.array_bytes[layout];
        }
        r.histogram.push_back(std::move(e));
        if (a.kind == 0)
            r.instances += a.instances;
        else if (a.kind == 1)
            r.object_arrays += a.instances;
        else
            r.primitive_arrays += a.instances;
    }
}

void heap_census::class_mirrors(census_result& r, layout_model& model) const {
    const class_info* class_class = classes_->find_by_name("java.lang.Class");
    if (class_class == nullptr || classes_->size() == 0) return;
    const std::uint64_t class_class_id = class_class->id();
    // A java.lang.Class instance's own size: as measured above when the dump holds one, else the layout's.
    const std::uint32_t* measured = r.instance_sizes.find(class_class_id);
    const std::uint32_t class_object_size = measured ? *measured : model.instance_size(class_class_id);
    auto row = std::find_if(r.histogram.begin(), r.histogram.end(),
                            [&](const histogram_entry& e) { return e.class_id == class_class_id; });
    if (row == r.histogram.end()) {
        r.histogram.push_back({class_class_id, "java.lang.Class", 0, 0});
        row = r.histogram.end() - 1;
    }
    for (const class_info& c : classes_->all()) {
        std::uint32_t size = model.mirror_size(c.id(), class_object_size);
        r.mirror_sizes.insert(c.id(), size);
        ++row->instances;
        row->shallow_bytes += size;
    }
}

void heap_census::heap_totals(census_result& r, std::size_t layout) const {
    if (heap_names_.empty()) return;
    const std::size_t n = heap_names_.size();
    for (std::size_t h = 0; h < n; ++h) r.heaps.push_back({heap_names_[h], 0, heap_array_bytes_[h][layout]});
    r.heap_runs = heap_runs_;
    const class_info* class_class = classes_->find_by_name("java.lang.Class");
    for (histogram_entry& e : r.histogram) e.heap_instances.assign(n, 0);
    for (std::size_t i = 0; i < accs_.size(); ++i) {
        const class_acc& a = accs_[i];
        histogram_entry& e = r.histogram[i];  // rows are in acc order until sorted
        const std::uint32_t* size = a.kind == 0 ? r.instance_sizes.find(a.class_id) : nullptr;
        for (std::size_t h = 0; h < n; ++h) {
            e.heap_instances[h] = a.heap_instances[h];
            r.heaps[h].objects += a.heap_instances[h];
            if (size != nullptr) r.heaps[h].shallow_bytes += a.heap_instances[h] * *size;
        }
    }
    // Class objects: counted in the java.lang.Class row, in the heap their CLASS_DUMP was in.
    auto row = class_class == nullptr
                   ? r.histogram.end()
                   : std::find_if(r.histogram.begin(), r.histogram.end(),
                                  [&](const histogram_entry& e) { return e.class_id == class_class->id(); });
    for (auto [class_id, h] : class_heaps_) {
        ++r.heaps[h].objects;
        if (const std::uint32_t* size = r.mirror_sizes.find(class_id)) r.heaps[h].shallow_bytes += *size;
        if (row != r.histogram.end()) ++row->heap_instances[h];
    }
}

void heap_census::largest_objects(census_result& r, std::size_t layout, std::vector<object_entry> candidates) const {
    for (const big_array& b : big_[layout]) {
        const class_acc& a = accs_[b.acc];
        std::string name =
            a.kind == 2 ? std::string(primitive_name(a.prim_type)) + "[]" : classes_->java_name(a.class_id);
        candidates.push_back({b.id, a.class_id, std::move(name), b.bytes, b.length, true});
    }
    std::sort(candidates.begin(), candidates.end(), [](const object_entry& a, const object_entry& b) {
        return a.shallow_bytes != b.shallow_bytes ? a.shallow_bytes > b.shallow_bytes : a.id < b.id;
    });
    if (candidates.size() > top_) candidates.resize(top_);
    r.largest = std::move(candidates);
}

census_result heap_census::finish() {
    census_result r;
    r.roots = roots_;
    r.subrecord_counts = subrecords_;
    r.thread_roots = thread_roots_;
    r.stripped = stripped_.result();
    gap_evidence gaps;
    const std::size_t best = choose_layout(r, gaps);
    choose_field_rules(layouts_[best], gaps, r);
    layout_model model(*classes_, layouts_[best], r.rules);
    std::vector<object_entry> candidates;
    histogram_rows(r, model, best, gaps, candidates);
    class_mirrors(r, model);
    heap_totals(r, best);
    r.classes = classes_->size();
    for (const auto& e : r.histogram) {
        r.shallow_bytes += e.shallow_bytes;
        if (e.class_name == "java.lang.String") r.string_instances += e.instances;
        if (e.class_name == "byte[]" || e.class_name == "char[]") r.text_arrays += e.instances;
    }
    std::sort(r.histogram.begin(), r.histogram.end(), [](const histogram_entry& a, const histogram_entry& b) {
        return a.shallow_bytes != b.shallow_bytes ? a.shallow_bytes > b.shallow_bytes : a.class_name < b.class_name;
    });
    largest_objects(r, best, std::move(candidates));
    return r;
}

}  // namespace analysis
}  // namespace heapd
