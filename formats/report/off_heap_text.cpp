#include "formats/report/quantities.h"
#include "formats/report/report_text.h"

namespace heapd {
inline namespace report {
namespace {

using text::fmt;
using text::grouped;
using text::human_bytes;

// "N things, SIZE: path" per group, the path wrapped.
void holder_lines(std::string& out, const std::vector<holder_group>& holders, unsigned top, const char* one,
                  const char* many, bool bytes) {
    const unsigned n = text::rows(holders.size(), top);
    for (unsigned i = 0; i < n; ++i) {
        const holder_group& h = holders[i];
        std::string head =
            grouped(h.count) + " " + (h.count == 1 ? one : many) + (bytes ? ", " + human_bytes(h.bytes) : "") + ": ";
        text::wrapped_path(out, "    ", head + path_text(h.path));
    }
}

void buffers(std::string& out, const direct_buffer_report& b, unsigned top) {
    std::string line = grouped(b.allocated) + " allocated, " + human_bytes(b.allocated_bytes);
    if (b.mapped != 0) line += "; " + grouped(b.mapped) + " mapping files, " + human_bytes(b.mapped_bytes);
    if (b.views != 0) line += "; " + grouped(b.views) + " slices or duplicates";
    if (b.foreign != 0)
        line += "; " + grouped(b.foreign) + " over native code's memory, " + human_bytes(b.foreign_bytes);
    if (b.unreachable != 0)
        line += "; " + grouped(b.unreachable) + " garbage, " + human_bytes(b.unreachable_bytes) + " freed after a GC";
    text::wrapped_list(out, "  ", "Direct buffers: " + line);
    if (b.jvm_reserved_bytes) {
        std::string jvm = "java.nio.Bits counts " + grouped(b.jvm_count.value_or(0)) + ", " +
                          human_bytes(*b.jvm_reserved_bytes) + " reserved";
        if (b.jvm_max_bytes) jvm += " of its " + human_bytes(*b.jvm_max_bytes) + " limit (MaxDirectMemorySize)";
        text::wrapped_list(out, "    ", jvm);
    }
    holder_lines(out, b.holders, top, "buffer", "buffers", true);
}

std::string names_line(const std::vector<thread_group>& groups, unsigned top) {
    std::string s;
    const unsigned n = text::rows(groups.size(), top);
    for (unsigned i = 0; i < n; ++i) s += (s.empty() ? "" : ", ") + grouped(groups[i].count) + " " + groups[i].key;
    return s;
}

// One stack per line: its count and innermost frame, then its outermost frame on a line of its own.
void stack_lines(std::string& out, const std::vector<thread_group>& groups, unsigned top) {
    static const std::string gap = " \u2026 ";
    const unsigned n = text::rows(groups.size(), top);
    for (unsigned i = 0; i < n; ++i) {
        const std::string& key = groups[i].key;
        const std::size_t at = key.find(gap);
        out += fmt("    %7s at %s\n", grouped(groups[i].count).c_str(), key.substr(0, at).c_str());
        if (at != std::string::npos) out += "              \u2026 " + key.substr(at + gap.size()) + "\n";
    }
}

void threads(std::string& out, const thread_summary_report& t, unsigned top) {
    std::string line = grouped(t.count) + " (" + grouped(t.daemon) + " daemon)";
    std::string states;
    for (const auto& [state, n] : t.states) states += (states.empty() ? ": " : ", ") + grouped(n) + " " + state;
    text::wrapped_list(out, "  ", "Threads: " + line + states);
    if (!t.by_name.empty()) text::wrapped_list(out, "    ", "by name: " + names_line(t.by_name, top));
    if (!t.by_stack.empty()) out += "    by stack:\n";
    stack_lines(out, t.by_stack, top);
    holder_lines(out, t.holders, top, "thread held by", "threads held by", false);
}

void loaders(std::string& out, const class_loader_report& l, unsigned top) {
    std::string line = grouped(l.loaders) + " defining " + grouped(l.classes - l.boot_classes) + " classes (" +
                       grouped(l.boot_classes) + " more by the boot loader)";
    const unsigned n = text::rows(l.by_class.size(), top);
    for (unsigned i = 0; i < n; ++i)
        line += (i == 0 ? ": " : ", ") + grouped(l.by_class[i].loaders) + " " + l.by_class[i].class_name;
    if (l.unreachable != 0) line += "; " + grouped(l.unreachable) + " unreachable, unloaded at a GC";
    text::wrapped_list(out, "  ", "Class loaders: " + line);
    if (!l.duplicates.empty()) {
        std::string d = "defined by more than one loader (" + grouped(l.duplicated_classes) +
                        (l.duplicated_classes == 1 ? " class name)" : " class names)");
        const unsigned m = text::rows(l.duplicates.size(), top);
        for (unsigned i = 0; i < m; ++i)
            d += (i == 0 ? ": " : ", ") + l.duplicates[i].class_name + " \u00d7" + grouped(l.duplicates[i].loaders);
        text::wrapped_list(out, "    ", d);
    }
    holder_lines(out, l.holders, top, "loader", "loaders", true);
}

// Android's Bitmaps: where their pixels are, the largest, and who holds them.
void bitmaps(std::string& out, const bitmap_report& b, unsigned top) {
    if (b.heap + b.native + b.recycled + b.unreachable == 0) return;
    std::string line;
    if (b.heap != 0) line += grouped(b.heap) + " with pixels in the heap, " + human_bytes(b.heap_bytes);
    if (b.native != 0)
        line += (line.empty() ? "" : "; ") + grouped(b.native) + " with native pixels, about " +
                human_bytes(b.native_bytes) + " (4 bytes a pixel)";
    if (b.recycled != 0) line += (line.empty() ? "" : "; ") + grouped(b.recycled) + " recycled";
    if (b.unreachable != 0)
        line += (line.empty() ? "" : "; ") + grouped(b.unreachable) + " garbage, " + human_bytes(b.unreachable_bytes) +
                " freed after a GC";
    text::wrapped_list(out, "  ", "Bitmaps: " + line);
    std::string largest;
    const unsigned n = text::rows(b.largest.size(), top);
    for (unsigned i = 0; i < n; ++i)
        largest += (i == 0 ? "largest: " : ", ") + fmt("%u\u00d7%u", b.largest[i].width, b.largest[i].height) + " " +
                   human_bytes(b.largest[i].pixel_bytes) +
                   fmt(" 0x%llx", static_cast<unsigned long long>(b.largest[i].id));
    if (!largest.empty()) text::wrapped_list(out, "    ", largest);
    holder_lines(out, b.holders, top, "bitmap", "bitmaps", true);
}

}  // namespace

void off_heap_text(std::string& out, const analysis_report& r, unsigned top) {
    const off_heap_report& o = r.off_heap;
    if (!o.computed && o.threads.count == 0) return;
    out += "\nOff-heap memory, as the heap shows it (direct buffers, threads, class loaders)\n";
    if (o.computed) buffers(out, o.direct_buffers, top);
    if (o.computed) bitmaps(out, o.bitmaps, top);
    if (o.threads.count != 0) threads(out, o.threads, top);
    if (o.computed) loaders(out, o.class_loaders, top);
}

}  // namespace report
}  // namespace heapd
