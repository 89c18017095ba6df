#include "formats/report/report_text.h"

#include "base/safe_text.h"
#include "formats/report/line_safe_report.h"
#include "formats/report/quantities.h"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <vector>

namespace heapd {
inline namespace report {
namespace {

using text::fmt;
using text::rows;
using text::wrapped_list;
using text::wrapped_path;

// Appends "  Label    item, item, ..." wrapped under 100 columns, continuation lines indented.
void wrapped_line(std::string& out, const char* label, const std::vector<std::string>& items) {
    std::string line = fmt("  %-8s ", label);
    const std::size_t indent = line.size();
    for (std::size_t i = 0; i < items.size(); ++i) {
        std::string item = items[i] + (i + 1 < items.size() ? "," : "");
        if (line.size() > indent && line.size() + 1 + item.size() > 99) {
            out += line + "\n";
            line = std::string(indent, ' ');
        }
        line += (line.size() > indent ? " " : "") + item;
    }
    out += line + "\n";
}

void header(std::string& out, const analysis_report& r, const std::string& title) {
    const summary_report& s = r.summary;
    out += (title.empty() ? "heapd analyze: " + (s.file.empty() ? std::string("<memory>") : s.file) : title) + "\n";
    out += fmt("  Dump     %s, %u-byte ids, taken %s, %s\n", s.format.c_str(), s.id_size,
               text::utc_time(s.timestamp_ms).c_str(), text::human_bytes(s.file_bytes).c_str());
    if (!s.writer.empty() || !s.java_version.empty()) {
        std::vector<std::string> jvm = {s.java_version.empty()
                                            ? "Java version unknown"
                                            : "Java " + s.java_version +
                                                  (s.version_source.empty() ? "" : " (from " + s.version_source + ")")};
        if (!s.java_runtime.empty()) jvm.push_back(s.java_runtime);
        if (!s.writer.empty()) jvm.push_back("written by the " + s.writer);
        wrapped_line(out, "JVM", jvm);
    }
    out += "  Layout   " + s.layout +
           (s.layout_inferred ? " (inferred from object addresses)\n" : " (assumed: object ids are not addresses)\n");
    if (!s.field_rules.empty())
        out += "  Fields   laid out as by " + s.field_rules +
               (s.field_rules_measured > 0 ? fmt(" (object addresses: %llu of %llu classes fit exactly)\n",
                                                 static_cast<unsigned long long>(s.field_rules_agree),
                                                 static_cast<unsigned long long>(s.field_rules_measured))
                                           : " (told by " + s.field_rules_source + ")\n");
    if (s.heap_dumps > 1)
        out +=
            fmt("  Dumps    this file holds %llu heap dumps: this is dump %u (heapd analyze --dump N picks another)\n",
                static_cast<unsigned long long>(s.heap_dumps), s.dump_number);
    if (s.strings_stripped)
        out +=
            "  Stripped every primitive array holds zeros (heapd strip): no string contents, thread names\n"
            "           or arrays of zeros\n";
    else if (s.stripped)
        out +=
            "  Stripped every primitive array but the Strings' holds zeros (heapd strip --keep-strings): no\n"
            "           arrays of zeros\n";
    std::uint64_t objects = s.instances + s.object_arrays + s.primitive_arrays;
    out += "  Heap     " + text::human_bytes(s.shallow_bytes) + " in " + text::grouped(objects) + " objects of " +
           text::grouped(s.classes) + " classes\n";
    out += "           " + text::grouped(s.instances) + " instances, " + text::grouped(s.object_arrays) +
           " object arrays, " + text::grouped(s.primitive_arrays) + " primitive arrays\n";
    if (!s.heaps.empty()) {
        std::vector<std::string> heaps;
        for (const heap_entry& h : s.heaps)
            heaps.push_back(h.name + " " + text::human_bytes(h.shallow_bytes) + " in " + text::grouped(h.objects) +
                            " objects" + (h.name == s.heap_focus ? " (the suspects' heap)" : ""));
        if (!s.heap_focus.empty())
            heaps.push_back("suspects and retainers are the " + s.heap_focus +
                            " heap's, the others' objects given (heapd analyze --heap all)");
        wrapped_line(out, "Heaps", heaps);
    }
    std::uint64_t roots = 0;
    std::vector<std::string> kinds;
    for (const auto& [k, n] : s.gc_roots) {
        roots += n;
        kinds.push_back(k + " " + text::grouped(n));
    }
    if (!kinds.empty()) kinds[0] = text::grouped(roots) + " GC roots: " + kinds[0];
    if (s.class_roots_inferred != 0)
        kinds.push_back("and " + text::grouped(s.class_roots_inferred) +
                        " classes of the JDK's loaders taken as roots (the dump marks no class as one)");
    wrapped_line(out, "Roots", kinds);
    std::vector<std::string> recs;
    for (const auto& [k, n] : s.records) recs.push_back(k + " " + text::grouped(n));
    wrapped_line(out, "Records", recs);
}

void problems(std::string& out, const analysis_report& r) {
    if (r.problems.empty()) return;
    out += "\nWarnings\n";
    for (const auto& p : r.problems) {
        // Word-wrapped under 100 columns, continuation lines under the message.
        std::string text = p.message + " (at file offset " + std::to_string(p.offset) + ")";
        std::string line = "  !";
        std::size_t start = 0;
        while (start < text.size()) {
            std::size_t end = text.find(' ', start);
            if (end == std::string::npos) end = text.size();
            std::string word = text.substr(start, end - start);
            if (line.size() > 4 && line.size() + 1 + word.size() > 99) {
                out += line + "\n";
                line = "   ";
            }
            line += " " + word;
            start = end + 1;
        }
        out += line + "\n";
    }
    if (r.problems_omitted != 0)
        out += "  ! and " + text::grouped(r.problems_omitted) + " more problems like these, not listed\n";
}

void histogram(std::string& out, const analysis_report& r, unsigned top) {
    unsigned n = rows(r.histogram.size(), top);
    out += fmt("\nClass histogram (top %u by shallow size)\n", n);
    out += fmt("  %4s %13s %11s %6s  %s\n", "#", "Instances", "Bytes", "Share", "Class");
    double total = static_cast<double>(r.summary.shallow_bytes ? r.summary.shallow_bytes : 1);
    for (unsigned i = 0; i < n; ++i) {
        const histogram_entry& e = r.histogram[i];
        out += fmt("  %4u %13s %11s %5.1f%%  %s\n", i + 1, text::grouped(e.instances).c_str(),
                   text::human_bytes(e.shallow_bytes).c_str(), 100.0 * static_cast<double>(e.shallow_bytes) / total,
                   e.class_name.c_str());
    }
}

void largest(std::string& out, const analysis_report& r, unsigned top) {
    unsigned n = rows(r.largest_objects.size(), top);
    if (n == 0) return;
    out += fmt("\nLargest objects (top %u by shallow size)\n", n);
    out += fmt("  %4s %11s  %-15s  %s\n", "#", "Bytes", "Id", "Class");
    for (unsigned i = 0; i < n; ++i) {
        const object_entry& o = r.largest_objects[i];
        std::string cls = o.class_name;
        if (o.is_array) cls += " (length " + text::grouped(o.length) + ")";
        out += fmt("  %4u %11s  0x%-13llx  %s\n", i + 1, text::human_bytes(o.shallow_bytes).c_str(),
                   static_cast<unsigned long long>(o.id), cls.c_str());
    }
}

void retention(std::string& out, const analysis_report& r, unsigned top) {
    const retention_report& t = r.retention;
    if (!t.computed) return;
    out += "\nReachability\n";
    out += "  " + text::human_bytes(t.reachable_bytes) + " in " + text::grouped(t.reachable_objects) +
           " objects reachable from GC roots through strong references; " + text::human_bytes(t.unreachable_bytes) +
           " in " + text::grouped(t.unreachable_objects) + " not\n";
    if (t.focus_bytes != 0)
        out += "  " + text::human_bytes(t.focus_bytes) + " of it in the " + r.summary.heap_focus +
               " heap, which retained sizes and shares below speak of\n";
    if (t.filler_objects != 0)
        out += "  of which " + text::human_bytes(t.filler_bytes) + " in " + text::grouped(t.filler_objects) +
               " are the collector's filler objects (dead space written as int[]; jcmd's "
               "jdk.internal.vm.FillerElement[])\n";
    unsigned n = rows(t.dominators.size(), top);
    if (n > 0) {
        out += fmt("\nBiggest retainers (top %u by retained size)\n", n);
        out += fmt("  %4s %11s %6s %11s  %-15s  %s\n", "#", "Retained", "Share", "Shallow", "Id", "Class");
        double total = static_cast<double>(t.share_base() ? t.share_base() : 1);
        for (unsigned i = 0; i < n; ++i) {
            const dominator_entry& d = t.dominators[i];
            out +=
                fmt("  %4u %11s %5.1f%% %11s  0x%-13llx  %s\n", i + 1, text::human_bytes(d.retained_bytes).c_str(),
                    100.0 * static_cast<double>(d.retained_bytes) / total, text::human_bytes(d.shallow_bytes).c_str(),
                    static_cast<unsigned long long>(d.id), d.class_name.c_str());
        }
    }
    n = rows(t.retained_by_class.size(), top);
    if (n > 0) {
        out += fmt("\nRetained by class (top %u)\n", n);
        out += fmt("  %4s %11s  %s\n", "#", "Retained", "Class");
        for (unsigned i = 0; i < n; ++i)
            out += fmt("  %4u %11s  %s\n", i + 1, text::human_bytes(t.retained_by_class[i].retained_bytes).c_str(),
                       t.retained_by_class[i].class_name.c_str());
    }
}

std::string groups_text(const std::vector<accumulated_class>& groups) {
    std::string s;
    for (const auto& a : groups)
        s += (s.empty() ? "" : ", ") + text::grouped(a.count) + " " + a.class_name + " (" +
             text::human_bytes(a.retained_bytes) + ")";
    return s;
}

void suspects(std::string& out, const analysis_report& r) {
    const retention_report& t = r.retention;
    if (!t.computed) return;
    out += fmt("\nLeak suspects (each retaining at least %.0f%% of the reachable ", 100 * t.suspect_threshold) +
           (r.summary.heap_focus.empty() ? std::string("heap)\n") : r.summary.heap_focus + " heap)\n");
    if (r.allocations.joined)
        out += fmt("  Where they were allocated: heapd's agent sampled %s allocations over %.0f s, one per %s\n",
                   text::grouped(r.allocations.samples).c_str(), r.allocations.seconds,
                   text::human_bytes(static_cast<std::uint64_t>(r.allocations.interval)).c_str());
    if (t.leak_suspects.empty()) out += "  none\n";
    unsigned i = 0;
    for (const leak_suspect& s : t.leak_suspects) {
        std::string head = fmt("  %u. %s (%.1f%%) ", ++i, text::human_bytes(s.retained_bytes).c_str(), 100 * s.share);
        if (s.is_class)
            head += "in " + text::grouped(s.instances) + " instances of " + s.suspect.class_name + ", none large alone";
        else
            head += fmt("retained by one %s 0x%llx", s.suspect.class_name.c_str(),
                        static_cast<unsigned long long>(s.suspect.id));
        out += head + "\n";
        if (!s.is_class) {
            std::string acc = s.accumulation.id == s.suspect.id
                                  ? "accumulates in it"
                                  : fmt("accumulates in %s 0x%llx (%s)", s.accumulation.class_name.c_str(),
                                        static_cast<unsigned long long>(s.accumulation.id),
                                        text::human_bytes(s.accumulation.retained_bytes).c_str());
            if (s.chain_length > 1) acc += ", the head of a chain of " + text::grouped(s.chain_length);
            if (!s.accumulated.empty()) acc += ": " + groups_text(s.accumulated);
            wrapped_list(out, "     ", acc);
        } else {
            if (!s.held_by.empty()) wrapped_list(out, "     ", "held by " + groups_text(s.held_by));
            // The instances that add up most: for class objects, the classes whose statics hold it.
            std::string biggest;
            for (const dominator_entry& b : s.biggest)
                biggest +=
                    (biggest.empty() ? "" : ", ") + b.class_name +
                    (b.class_name.starts_with("class ") ? "" : fmt(" 0x%llx", static_cast<unsigned long long>(b.id))) +
                    " (" + text::human_bytes(b.retained_bytes) + ")";
            if (!biggest.empty()) wrapped_list(out, "     ", "the biggest: " + biggest);
        }
        wrapped_path(out, "     ", (s.is_class ? "path to the biggest: " : "path: ") + path_text(s.path));
        for (const allocation_site_entry& a : s.allocated_at)
            wrapped_list(out, "     ",
                         a.class_name + " allocated at " + a.origin + ": " + text::round_percent(100 * a.share) +
                             " of its sampled live bytes (" + text::human_bytes(a.live_bytes) + " estimated)");
    }
}

// LeakCanary's watched objects still in the heap: the app's own leaks, before the suspects.
void watched(std::string& out, const analysis_report& r) {
    const retention_report& t = r.retention;
    if (!t.computed || t.watched.empty()) return;
    out += "\nWatched by LeakCanary and still in the heap (the app said these should be gone)\n";
    unsigned i = 0;
    for (const watched_object& w : t.watched) {
        out += fmt("  %u. %s 0x%llx, %s retained", ++i, w.object.class_name.c_str(),
                   static_cast<unsigned long long>(w.object.id), text::human_bytes(w.object.retained_bytes).c_str());
        out += (w.description.empty() ? std::string() : ": " + w.description) + "\n";
        if (!w.key.empty()) out += "     key " + w.key + "\n";
        if (!w.reachable) {
            out += "     no strong reference holds it any more: gone at the next GC\n";
            continue;
        }
        wrapped_path(out, "     ", "path: " + path_text(w.path));
        if (w.only_binder_held)
            wrapped_list(out, "     ",
                         "held only through a Binder that a JNI global root holds (the system's handle on a "
                         "service): LeakCanary counts no leak once such roots are excluded");
    }
}

// Duplicate strings, empty and sparse collections, boxes and zero arrays: the total first.
void waste(std::string& out, const analysis_report& r, unsigned top) {
    const waste_report& w = r.waste;
    if (!w.computed) return;
    double heap = static_cast<double>(r.summary.shallow_bytes ? r.summary.shallow_bytes : 1);
    out += "\nWaste (" + text::human_bytes(w.saving_bytes) + " could be saved, " +
           fmt("%.1f%%", 100.0 * static_cast<double>(w.saving_bytes) / heap) + " of the heap)\n";
    std::uint64_t collections = 0, empty = 0, sparse = 0, boxes = 0, distinct = 0, zero_arrays = 0;
    for (const auto& c : w.collections) {
        collections += c.count;
        empty += c.empty;
        sparse += c.sparse;
    }
    for (const auto& b : w.boxed) {
        boxes += b.count;
        distinct += b.distinct_values;
    }
    for (const auto& z : w.zero_arrays) zero_arrays += z.count;
    auto line = [&](const char* what, std::uint64_t bytes, const std::string& detail) {
        out += fmt("  %-17s %9s  ", what, text::human_bytes(bytes).c_str()) + detail + "\n";
    };
    const std::string stripped = "not counted: the dump is stripped";
    line("Duplicate strings", w.duplicate_string_saving,
         r.summary.strings_stripped ? stripped
                                    : text::grouped(w.duplicate_strings) + " Strings in " +
                                          text::grouped(w.duplicate_string_groups) + " groups of equal contents");
    line("Collections", w.collection_saving,
         text::grouped(empty) + " empty, " + text::grouped(sparse) + " sparse of " + text::grouped(collections) +
             " maps and lists");
    line("Boxed primitives", w.boxed_saving,
         text::grouped(boxes) + " boxes of " + text::grouped(distinct) + " distinct values");
    line("Zero arrays", w.zero_array_saving,
         r.summary.stripped ? stripped : text::grouped(zero_arrays) + " primitive arrays of zeros only");
    if (unsigned n = rows(w.duplicate_strings_top.size(), top)) {
        out += fmt("\nDuplicate strings (top %u by saving)\n", n);
        out += fmt("  %4s %8s %9s  %s\n", "#", "Copies", "Saving", "Contents (length)");
        for (unsigned i = 0; i < n; ++i) {
            const duplicate_string_entry& d = w.duplicate_strings_top[i];
            out += fmt("  %4u %8s %9s  ", i + 1, text::grouped(d.copies).c_str(),
                       text::human_bytes(d.saving_bytes).c_str()) +
                   "\"" + d.content + "\" (" + text::grouped(d.length) + ")\n";
        }
    }
    if (unsigned n = rows(w.collections.size(), top)) {
        out += fmt("\nEmpty and sparse collections (top %u by saving)\n", n);
        out += fmt("  %4s %9s %9s %9s %9s  %s\n", "#", "Count", "Empty", "Sparse", "Saving", "Class");
        for (unsigned i = 0; i < n; ++i) {
            const collection_waste_entry& c = w.collections[i];
            out += fmt("  %4u %9s %9s %9s %9s  ", i + 1, text::grouped(c.count).c_str(), text::grouped(c.empty).c_str(),
                       text::grouped(c.sparse).c_str(), text::human_bytes(c.saving_bytes).c_str()) +
                   c.class_name + "\n";
        }
    }
    if (!w.boxed.empty()) {
        out += "\nBoxed primitives\n";
        out += fmt("  %4s %9s %9s %9s %9s  %s\n", "#", "Count", "Bytes", "Distinct", "Saving", "Class");
        for (unsigned i = 0; i < w.boxed.size(); ++i) {
            const boxed_waste_entry& b = w.boxed[i];
            out += fmt("  %4u %9s %9s %9s %9s  ", i + 1, text::grouped(b.count).c_str(),
                       text::human_bytes(b.bytes).c_str(), text::grouped(b.distinct_values).c_str(),
                       text::human_bytes(b.saving_bytes).c_str()) +
                   b.class_name + "\n";
        }
    }
    if (!w.zero_arrays.empty()) {
        out += "\nPrimitive arrays of zeros only\n";
        out += fmt("  %4s %9s %9s  %s\n", "#", "Count", "Bytes", "Type");
        for (unsigned i = 0; i < w.zero_arrays.size(); ++i) {
            const zero_array_entry& z = w.zero_arrays[i];
            out += fmt("  %4u %9s %9s  ", i + 1, text::grouped(z.count).c_str(), text::human_bytes(z.bytes).c_str()) +
                   z.class_name + "\n";
        }
    }
}

void threads(std::string& out, const analysis_report& r, unsigned max_frames) {
    if (r.threads.empty()) return;
    out += fmt("\nThreads (%zu)\n", r.threads.size());
    for (const auto& t : r.threads) {
        out += "  \"" + t.name + "\"";
        if (t.daemon && *t.daemon) out += " daemon";
        if (!t.state.empty()) out += " " + t.state;
        out += "\n";
        unsigned n = rows(t.frames.size(), max_frames);
        for (unsigned i = 0; i < n; ++i) out += "      at " + t.frames[i] + "\n";
        if (n < t.frames.size()) out += fmt("      ... %zu more\n", t.frames.size() - n);
    }
}

void legacy(std::string& out, const analysis_report& r, unsigned top) {
    const legacy_report& l = r.legacy;
    if (l.empty()) return;
    out += "\nProfiler records (old hprof agent)\n";
    if (l.control_flags)
        out +=
            fmt("  Control settings: allocation traces %s, CPU sampling %s, stack depth %u\n",
                (*l.control_flags & 1) ? "on" : "off", (*l.control_flags & 2) ? "on" : "off", *l.control_stack_depth);
    if (l.heap_summary_live)
        out += fmt("  Heap summary: %llu live bytes in %llu instances; %llu bytes in %llu instances allocated\n",
                   static_cast<unsigned long long>(l.heap_summary_live->first),
                   static_cast<unsigned long long>(l.heap_summary_live->second),
                   static_cast<unsigned long long>(l.heap_summary_allocated->first),
                   static_cast<unsigned long long>(l.heap_summary_allocated->second));
    if (!l.alloc_sites.empty()) {
        out += "\nSITES BEGIN (ordered by live bytes)\n";
        out += "          percent          live          alloc'ed  stack class\n";
        out += " rank   self  accum     bytes objs     bytes  objs trace name\n";
        double total = static_cast<double>(l.sites_total_live_bytes ? l.sites_total_live_bytes : 1);
        double accum = 0;
        unsigned n = rows(l.alloc_sites.size(), top);
        for (unsigned i = 0; i < n; ++i) {
            const auto& s = l.alloc_sites[i];
            double self = 100.0 * static_cast<double>(s.live_bytes) / total;
            accum += self;
            out += fmt("%5u %5.2f%% %5.2f%% %9llu %4llu %9llu %5llu %5u %s\n", i + 1, self, accum,
                       static_cast<unsigned long long>(s.live_bytes), static_cast<unsigned long long>(s.live_instances),
                       static_cast<unsigned long long>(s.allocated_bytes),
                       static_cast<unsigned long long>(s.allocated_instances), s.trace_serial, s.class_name.c_str());
        }
        if (n < l.alloc_sites.size()) out += fmt("  ... %zu more sites\n", l.alloc_sites.size() - n);
        out += "SITES END\n";
    }
    if (!l.cpu_samples.empty()) {
        out += fmt("\nCPU SAMPLES BEGIN (total = %llu)\n", static_cast<unsigned long long>(l.cpu_total_samples));
        out += " rank   self  count method\n";
        double total = static_cast<double>(l.cpu_total_samples ? l.cpu_total_samples : 1);
        unsigned n = rows(l.cpu_samples.size(), top);
        for (unsigned i = 0; i < n; ++i)
            out += fmt("%5u %5.2f%% %6llu %s\n", i + 1, 100.0 * static_cast<double>(l.cpu_samples[i].first) / total,
                       static_cast<unsigned long long>(l.cpu_samples[i].first), l.cpu_samples[i].second.c_str());
        out += "CPU SAMPLES END\n";
    }
}

}  // namespace

std::string render_text(const object_paths_report& report) {
    const object_paths_report r = line_safe_copy(report);
    std::string out = fmt("heapd path: 0x%llx, ", static_cast<unsigned long long>(r.id)) + r.class_name +
                      (r.is_array ? " of " + text::grouped(r.length) + " elements" : std::string()) + ", " +
                      text::human_bytes(r.shallow_bytes) + " shallow, " + text::human_bytes(r.retained_bytes) +
                      " retained\n";
    if (!r.file.empty()) out += "  in " + r.file + "\n";
    if (!r.reachable) {
        out +=
            "  unreachable: no chain of strong references from a GC root leads to it "
            "(garbage, or held only through weak, soft or phantom references)\n";
        return terminal_safe(out);
    }
    unsigned i = 0;
    for (const gc_path& p : r.paths) {
        out += fmt("  %u. %s references from a GC root\n", ++i, text::grouped(p.length).c_str());
        wrapped_path(out, "     ", path_text(p));
    }
    return terminal_safe(out);
}

std::string path_text(const gc_path& path) {
    std::string s;
    if (path.steps.empty()) return "unreachable";
    if (!path.root_kinds.empty()) {
        s += "(";
        for (std::size_t i = 0; i < path.root_kinds.size(); ++i) s += (i ? ", " : "") + path.root_kinds[i];
        s += " root) ";
    }
    for (std::size_t i = 0; i < path.steps.size(); ++i) {
        const path_step& p = path.steps[i];
        if (i > 0) s += " \u2192 ";
        if (p.field.empty()) {
            s += p.class_name;
        } else if (p.is_class) {
            s += p.class_name + " (" + p.field + ")";
        } else if (std::size_t dims = p.class_name.find("[]"); p.field.starts_with("[") && dims != std::string::npos) {
            // "java.lang.Object[][]" element 3: "java.lang.Object[3][]", the index on the outer dimension
            s += p.class_name.substr(0, dims) + p.field + p.class_name.substr(dims + 2);
        } else {
            s += p.class_name + "." + p.field;
        }
        if (p.repeat > 1) s += " \u00d7" + text::grouped(p.repeat);
    }
    return s;
}

std::string render_text(const analysis_report& report, const text_options& options) {
    const analysis_report r = line_safe_copy(report);
    std::string out;
    header(out, r, options.title);
    problems(out, r);
    auto on = [&](text_options::section s) { return (options.sections & s) != 0; };
    if (on(text_options::suspects)) {
        watched(out, r);
        suspects(out, r);
    }
    if (on(text_options::retention)) retention(out, r, options.top);
    if (on(text_options::histogram)) histogram(out, r, options.top);
    if (on(text_options::largest)) largest(out, r, options.top);
    if (on(text_options::waste)) waste(out, r, options.top);
    if (on(text_options::off_heap)) off_heap_text(out, r, options.top);
    if (on(text_options::threads)) threads(out, r, options.max_frames);
    if (on(text_options::legacy)) legacy(out, r, options.top);
    return terminal_safe(out);
}

}  // namespace report
}  // namespace heapd
