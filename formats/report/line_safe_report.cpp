#include "formats/report/line_safe_report.h"

#include "base/safe_text.h"

namespace heapd {
inline namespace report {
namespace {

void fix(std::string& s) { s = line_safe(s); }

void fix(std::vector<std::string>& v) {
    for (std::string& s : v) fix(s);
}

void fix(dominator_entry& d) { fix(d.class_name); }

void fix(gc_path& p) {
    fix(p.root_kinds);
    for (path_step& s : p.steps) {
        fix(s.class_name);
        fix(s.field);
    }
}

void fix(leak_suspect& s) {
    fix(s.suspect);
    fix(s.accumulation);
    for (accumulated_class& a : s.accumulated) fix(a.class_name);
    for (accumulated_class& a : s.held_by) fix(a.class_name);
    for (dominator_entry& d : s.biggest) fix(d);
    fix(s.path);
    for (allocation_site_entry& a : s.allocated_at) {
        fix(a.class_name);
        fix(a.origin);
        fix(a.frames);
    }
}

void fix(std::vector<holder_group>& holders) {
    for (holder_group& h : holders) fix(h.path);
}

void fix(off_heap_report& o) {
    for (auto& [state, n] : o.threads.states) fix(state);
    for (auto* groups : {&o.threads.by_name, &o.threads.by_stack})
        for (thread_group& g : *groups) {
            fix(g.key);
            fix(g.example);
            fix(g.frames);
        }
    fix(o.threads.holders);
    fix(o.direct_buffers.holders);
    for (loader_class_entry& e : o.class_loaders.by_class) fix(e.class_name);
    for (duplicate_class_entry& e : o.class_loaders.duplicates) fix(e.class_name);
    fix(o.class_loaders.holders);
}

void fix(diff_side& s) {
    fix(s.file);
    fix(s.layout);
}

}  // namespace

analysis_report line_safe_copy(analysis_report r) {
    summary_report& s = r.summary;
    for (std::string* text : {&s.file, &s.format, &s.layout, &s.field_rules, &s.field_rules_source, &s.writer,
                              &s.java_version, &s.java_runtime, &s.version_source, &s.heap_focus})
        fix(*text);
    for (heap_entry& h : s.heaps) fix(h.name);
    for (auto* counts : {&s.records, &s.subrecords, &s.gc_roots})
        for (auto& [name, count] : *counts) fix(name);
    for (histogram_entry& h : r.histogram) fix(h.class_name);
    for (object_entry& o : r.largest_objects) fix(o.class_name);
    for (thread_report& t : r.threads) {
        fix(t.name);
        fix(t.state);
        fix(t.frames);
    }
    for (alloc_site_report& a : r.legacy.alloc_sites) fix(a.class_name);
    for (auto& [samples, frame] : r.legacy.cpu_samples) fix(frame);
    for (dominator_entry& d : r.retention.dominators) fix(d);
    for (retained_class_entry& c : r.retention.retained_by_class) fix(c.class_name);
    for (leak_suspect& l : r.retention.leak_suspects) fix(l);
    for (watched_object& w : r.retention.watched) {
        fix(w.key);
        fix(w.description);
        fix(w.object.class_name);
        fix(w.path);
    }
    for (tree_node& n : r.retention.tree) fix(n.class_name);
    for (problem_report& p : r.problems) fix(p.message);
    for (duplicate_string_entry& d : r.waste.duplicate_strings_top) fix(d.content);
    for (collection_waste_entry& c : r.waste.collections) fix(c.class_name);
    for (boxed_waste_entry& b : r.waste.boxed) fix(b.class_name);
    for (zero_array_entry& z : r.waste.zero_arrays) fix(z.class_name);
    fix(r.allocations.agent);
    fix(r.off_heap);
    return r;
}

diff_report line_safe_copy(diff_report r) {
    fix(r.before);
    fix(r.after);
    for (auto* entries : {&r.grew, &r.shrank})
        for (class_diff_entry& e : *entries) fix(e.class_name);
    fix(r.notes);
    return r;
}

object_paths_report line_safe_copy(object_paths_report r) {
    fix(r.file);
    fix(r.class_name);
    for (gc_path& p : r.paths) fix(p);
    return r;
}

}  // namespace report
}  // namespace heapd
