#include "analysis/analysis.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <limits>
#include <optional>
#include <system_error>
#include <thread>

#include "analysis/census.h"
#include "analysis/class_roots.h"
#include "analysis/dominator_outline.h"
#include "analysis/dominator_tree.h"
#include "analysis/dump_origin.h"
#include "analysis/fillers.h"
#include "analysis/heap_focus.h"
#include "analysis/leak_suspects.h"
#include "analysis/live_histogram.h"
#include "analysis/object_graph.h"
#include "analysis/off_heap.h"
#include "analysis/retention.h"
#include "analysis/root_paths.h"
#include "analysis/thread_groups.h"
#include "analysis/threads.h"
#include "analysis/waste.h"
#include "analysis/watched_objects.h"
#include "base/big_memory.h"
#include "formats/hprof/class_table.h"
#include "formats/hprof/heap_walk.h"
#include "formats/hprof/hprof_reader.h"
#include "formats/hprof/legacy_records.h"
#include "formats/hprof/record_index.h"

namespace heapd {
inline namespace analysis {
namespace {

// Adds a problem to the report while it holds fewer than problem_list::max_kept; counts it otherwise.
void add_problem(analysis_report& r, problem_report p) {
    if (r.problems.size() < problem_list::max_kept)
        r.problems.push_back(std::move(p));
    else
        ++r.problems_omitted;
}

void add_counts(summary_report& s, const record_index& idx, const census_result& c) {
    for (unsigned tag = 0; tag < 256; ++tag) {
        if (std::uint64_t n = idx.record_counts()[tag]) {
            const char* name = record_tag_name(static_cast<std::uint8_t>(tag));
            s.records.emplace_back(name ? name : "UNKNOWN_" + std::to_string(tag), n);
        }
        if (std::uint64_t n = c.subrecord_counts[tag]) {
            const char* name = heap_tag_name(static_cast<std::uint8_t>(tag));
            s.subrecords.emplace_back(name ? name : "UNKNOWN_" + std::to_string(tag), n);
        }
    }
    for (unsigned k = 0; k < root_kind_count; ++k)
        if (c.roots[k] != 0) s.gc_roots.emplace_back(root_kind_name(static_cast<root_kind>(k)), c.roots[k]);
}

void add_legacy(analysis_report& r, const record_index& idx) {
    legacy_report& l = r.legacy;
    for (const hprof_record& rec : idx.legacy_records()) {
        auto problem = [&](const error_info& e) { add_problem(r, {e.message, e.offset, false}); };
        switch (static_cast<record_tag>(rec.tag)) {
        case record_tag::alloc_sites:
            if (auto t = decode_alloc_sites(rec, idx)) {
                l.sites_total_live_bytes = t->total_live_bytes;
                l.sites_total_live_instances = t->total_live_instances;
                l.alloc_sites.clear();
                for (const alloc_site& s : t->sites)
                    l.alloc_sites.push_back({s.class_name, s.trace_serial, s.live_bytes, s.live_instances,
                                             s.allocated_bytes, s.allocated_instances});
                std::stable_sort(l.alloc_sites.begin(), l.alloc_sites.end(),
                                 [](const auto& a, const auto& b) { return a.live_bytes > b.live_bytes; });
            } else
                problem(t.error());
            break;
        case record_tag::cpu_samples:
            if (auto t = decode_cpu_samples(rec)) {
                l.cpu_total_samples += t->total_samples;
                for (auto [samples, serial] : t->traces) {
                    std::string top = "<trace " + std::to_string(serial) + ">";
                    if (const trace_info* tr = idx.trace(serial); tr && tr->frame_ids.size() >= idx.id_size())
                        if (const frame_info* f = idx.frame(be::id(tr->frame_ids.data(), idx.id_size())))
                            top = format_frame(idx, *f);
                    l.cpu_samples.emplace_back(samples, std::move(top));
                }
                std::stable_sort(l.cpu_samples.begin(), l.cpu_samples.end(),
                                 [](const auto& a, const auto& b) { return a.first > b.first; });
            } else
                problem(t.error());
            break;
        case record_tag::heap_summary:
            if (auto t = decode_heap_summary(rec)) {
                l.heap_summary_live = {t->live_bytes, t->live_instances};
                l.heap_summary_allocated = {t->allocated_bytes, t->allocated_instances};
            } else
                problem(t.error());
            break;
        case record_tag::control_settings:
            if (auto t = decode_control_settings(rec)) {
                l.control_flags = t->flags;
                l.control_stack_depth = t->stack_depth;
            } else
                problem(t.error());
            break;
        default: break;
        }
    }
}

// Tells the caller a phase starts; false when it asks to stop.
bool phase(const analysis_options& options, std::string_view name) {
    return !options.phase_started || options.phase_started(name);
}

std::unexpected<error_info> cancelled() { return fail(error_code::cancelled, "the analysis was cancelled"); }

// Reads what needs a few objects' records (thread names and states, the version Strings): with
// walks over the heap, or, given a finder, straight from their records.
using record_reader = std::function<bool(const record_finder& finder)>;

// Runs work on a thread of its own (joined when the handle goes), or now on this one where no
// thread can be made (under a tight memory limit, RLIMIT_DATA, a thread's stack may not fit) or
// options say to use one.
std::jthread beside(const std::function<void()>& work, const analysis_options& options) {
    if (options.workers == 1) {
        work();
        return {};
    }
    try {
        return std::jthread(work);
    } catch (const std::system_error&) {
        work();
        return {};
    }
}

// The object graph and what the dominator tree tells; once the graph is built, read_records with
// the graph's record offsets. The shortest paths from the roots are found on a second thread while
// the dominator tree is computed; both only read the graph. Node is the type of node numbers.
template <typename Node>
bool add_retention(analysis_report& r, const record_index& idx, const class_table& classes, const census_result& c,
                   const analysis_options& options, const record_reader& read_records,
                   const std::function<void()>& waste_walk, bool waste_beside, filler_counts& fillers) {
    using graph_type = basic_object_graph<Node>;
    graph_options go;
    go.progress = options.phase_progress;
    go.narrow_nodes_below = options.narrow_nodes_below;
    go.threads = options.workers;
    auto graph = graph_type::build(idx, classes, c, go);
    if (options.bulk_reads_done && !waste_walk) options.bulk_reads_done();
    if (!graph) {
        if (waste_walk) {
            if (!phase(options, "waste")) return false;
            waste_walk();
            if (options.bulk_reads_done) options.bulk_reads_done();
        }
        add_problem(r, {graph.error().message, 0, false});
        return read_records({});
    }
    const graph_type& g = *graph;
    // Refused here, not after an hour of dominators, when the tree cannot fit (big_memory::expect).
    big_memory::expect(basic_dominator_tree<Node>::least_bytes(g));
    if (!read_records([&g](std::uint64_t id) -> std::optional<std::uint64_t> {
            const Node node = g.node_of(id);
            if (node == graph_type::no_node) return std::nullopt;
            return g.record_offset(node);
        }))
        return false;
    // One thread beside the dominator tree (which keeps one core busy): the waste report's walk when
    // waste_beside (the dump is read in bulk until it ends), then the shortest paths from the roots
    // unless this thread, done with the tree and what needs no paths, took them first; more threads
    // than cores would only slow the tree. The waste's arrays are given back while the tree still
    // grows, which takes their pages (big_memory::reuse_scope). Joined before this returns.
    if (waste_walk && !phase(options, "waste")) return false;
    auto walk = [&waste_walk, &options] {
        waste_walk();
        if (options.bulk_reads_done) options.bulk_reads_done();
    };
    if (waste_walk && !waste_beside) walk();
    if (!phase(options, "dominators")) return false;
    basic_root_paths<Node> paths;
    std::atomic<bool> paths_taken = false, paths_done = false;
    auto find_paths = [&] {
        paths = basic_root_paths<Node>::compute(g);
        paths_done.store(true, std::memory_order_release);
        paths_done.notify_all();
    };
    std::jthread helper = beside(
        [&] {
            if (waste_walk && waste_beside) walk();
            if (!paths_taken.exchange(true)) find_paths();
        },
        options);
    const auto dom =
        basic_dominator_tree<Node>::compute(g, std::numeric_limits<std::uint32_t>::max(), options.phase_progress);
    fillers = find_fillers(idx, classes, g, dom);
    count_reachable(g, dom, r.histogram);
    if (!phase(options, "suspects")) return false;
    const auto children = dom.children();
    heap_focus focus;
    if (const std::optional<unsigned> heap = focus_heap(c, options.heap)) {
        focus = make_heap_focus<Node>(g, children, c, *heap);
        r.summary.heap_focus = c.heaps[*heap].name;
    }
    const heap_focus* focused = focus.active() ? &focus : nullptr;
    r.retention = summarize_retention(g, dom, children, classes, options.largest,
                                      options.all_retained_classes ? 0 : options.largest, focused);
    r.retention.focus_bytes = focused ? focus.reachable_bytes : 0;
    if (!paths_taken.exchange(true))
        find_paths();
    else
        paths_done.wait(false, std::memory_order_acquire);
    suspect_options so;
    so.focus = focused;
    so.threshold = options.suspect_threshold;
    r.retention.suspect_threshold = so.threshold;
    r.retention.root_objects = g.roots().size();
    r.retention.leak_suspects = find_leak_suspects(g, dom, children, classes, paths, so);
    r.retention.watched = find_watched_objects(idx, classes, g, dom);
    r.off_heap = find_off_heap(g, dom, classes, paths, r.threads);
    r.retention.tree_min_share = options.tree.min_share;
    if (options.tree.max_nodes > 0) r.retention.tree = outline_dominator_tree(g, dom, children, classes, options.tree);
    return true;
}

// add_retention with 32-bit node numbers when the census counts few enough objects, else 64-bit.
// waste_walk, when given, runs once the graph is built, beside the dominator tree if waste_beside.
bool add_retention(analysis_report& r, const record_index& idx, const class_table& classes, const census_result& c,
                   const analysis_options& options, const record_reader& read_records,
                   const std::function<void()>& waste_walk, bool waste_beside, filler_counts& fillers) {
    if (!phase(options, "object graph")) return false;
    if (c.object_count() < options.narrow_nodes_below)
        return add_retention<std::uint32_t>(r, idx, classes, c, options, read_records, waste_walk, waste_beside,
                                            fillers);
    return add_retention<std::uint64_t>(r, idx, classes, c, options, read_records, waste_walk, waste_beside, fillers);
}

// Whether the waste report's walks may run beside the dominator tree: only when the big arrays'
// budget (base/big_memory.h) leaves room for twice the peak measured per object (about 60 bytes,
// docs/analyze.md) beside what is taken, and nothing has been spilled: where memory is short the
// two would compete for it, and the walks run on their own, between the threads and the dominators.
bool waste_beside_dominators(const census_result& c) {
    const big_memory::usage u = big_memory::current_usage();
    if (u.spilled != 0 || u.anonymous >= u.budget) return false;
    const std::uint64_t room = u.budget - u.anonymous;
    return c.object_count() <= room / 128;
}

}  // namespace

result<void> check_dump_number(const record_index& idx, unsigned dump) {
    if (dump != last_heap_dump && idx.heap_dump_number() == 0)
        return fail(error_code::not_found, "there is no heap dump " + std::to_string(dump) +
                                               " in this file: it holds " + std::to_string(idx.heap_dump_count()));
    return {};
}

result<analysis_report> analyze_dump(std::span<const std::byte> data, const analysis_options& options) {
    // The phases' big arrays take the pages the earlier phases' arrays gave back.
    const big_memory::reuse_scope reuse;
    auto reader = hprof_reader::parse(data);
    if (!reader) return std::unexpected(reader.error());
    if (!phase(options, "index")) return cancelled();
    record_index idx = record_index::build(*reader, options.dump);
    if (auto ok = check_dump_number(idx, options.dump); !ok) return std::unexpected(ok.error());
    class_table classes(idx);
    heap_census census(idx, classes, options.largest);
    problem_list heap_problems;
    if (!phase(options, "census")) return cancelled();
    walk_heap(idx, census, &heap_problems);
    census_result c = census.finish();
    c.inferred_class_roots = inferred_class_roots(idx, classes, c);

    analysis_report r;
    summary_report& s = r.summary;
    s.file = options.file_name;
    s.file_bytes = data.size();
    s.format = std::string(reader->header().format);
    s.id_size = reader->id_size();
    s.timestamp_ms = reader->header().timestamp_ms;
    s.layout = c.layout;
    s.layout_inferred = c.layout_inferred;
    s.field_rules = std::string(c.rules.name());
    s.field_rules_source = c.rules_source;
    s.field_rules_agree = c.rules_agree;
    s.field_rules_measured = c.rules_measured;
    s.heap_dumps = idx.heap_dump_count();
    s.class_roots_inferred = c.inferred_class_roots.size();
    s.dump_number = idx.heap_dump_number();
    s.instances = c.instances;
    s.object_arrays = c.object_arrays;
    s.primitive_arrays = c.primitive_arrays;
    s.classes = c.classes;
    s.shallow_bytes = c.shallow_bytes;
    add_counts(s, idx, c);
    s.stripped = c.stripped.arrays;
    s.heaps = c.heaps;
    s.strings_stripped = c.stripped.strings;

    for (const error_info& e : idx.problems())
        add_problem(r, {e.message, e.offset, e.code == error_code::out_of_bounds && idx.truncated()});
    for (const error_info& e : heap_problems.kept()) add_problem(r, {e.message, e.offset, false});
    r.problems_omitted += idx.problems_omitted() + heap_problems.omitted();

    r.histogram = std::move(c.histogram);
    r.largest_objects = std::move(c.largest);
    // The version Strings are read with the thread names when there are threads to name; after the
    // object graph when there is one (its record offsets find them without walking the heap).
    const version_strings versions = find_version_strings(idx, classes, c);
    strings_along along{versions.ids, {}};
    const record_reader read_records = [&](const record_finder& finder) {
        if (options.threads) {
            if (!phase(options, "threads")) return false;
            for (thread_entry& t : collect_threads(idx, classes, c.thread_roots, c.stripped.strings, &along, finder))
                r.threads.push_back(
                    {std::move(t.name), std::move(t.state), t.daemon, std::move(t.frames), t.object_id});
        } else if (!versions.ids.empty()) {
            along.text = read_strings(idx, classes, versions.ids, finder);
        }
        const dump_origin origin = find_dump_origin(idx, classes, c, versions, along.text);
        s.writer = origin.writer;
        s.java_version = origin.java_version;
        s.java_runtime = origin.java_runtime;
        s.version_source = origin.version_source;
        return true;
    };
    if (!options.retained && !read_records({})) return cancelled();
    std::function<void()> waste_walk;
    if (options.waste) waste_walk = [&] { r.waste = find_waste(idx, classes, c, options.largest); };
    if (options.retained) {
        const bool beside = options.waste_beside_dominators && waste_beside_dominators(c);
        filler_counts fillers;
        if (!add_retention(r, idx, classes, c, options, read_records, waste_walk, beside, fillers)) return cancelled();
        set_fillers_apart(r, fillers);
    } else if (waste_walk) {
        if (!phase(options, "waste")) return cancelled();
        waste_walk();
    }
    if (!options.retained && options.bulk_reads_done) options.bulk_reads_done();
    if (!r.off_heap.computed) r.off_heap.threads = group_threads(r.threads);
    if (options.top != 0 && r.histogram.size() > options.top) r.histogram.resize(options.top);
    add_legacy(r, idx);
    return r;
}

}  // namespace analysis
}  // namespace heapd
