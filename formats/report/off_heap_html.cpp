// The HTML report's off-heap section (html_sections.h).
#include "formats/report/html_sections.h"
#include "formats/report/quantities.h"
#include "formats/report/report_text.h"

namespace heapd {
inline namespace report {
namespace html {
namespace {

std::string paragraph(const std::string& s) { return "<p>" + escape(s) + "</p>\n"; }

std::string holders_table(const char* id, const std::vector<holder_group>& holders, const char* noun, bool bytes) {
    if (holders.empty()) return "";
    std::vector<std::string> headings{noun};
    if (bytes) headings.emplace_back("Bytes");
    headings.emplace_back("Held by (one of them)");
    table t(id, headings, false);
    for (const holder_group& h : holders) {
        std::vector<cell> row{count_cell(h.count)};
        if (bytes) row.push_back(bytes_cell(h.bytes));
        row.push_back(text(path_text(h.path)));
        t.row(std::move(row));
    }
    return t.html();
}

std::string groups_table(const char* id, const std::vector<thread_group>& groups, const char* key) {
    table t(id, {key, "Threads", "For example"}, false);
    for (const thread_group& g : groups) t.row({text(g.key), count_cell(g.count), text(g.example)});
    return t.html();
}

std::string buffers(const direct_buffer_report& b) {
    std::string body = "<h3>Direct buffers</h3>\n";
    table t("direct-buffers-table", {"Kind", "Buffers", "Bytes"}, false, false);
    t.row({text("Allocated (allocateDirect)"), count_cell(b.allocated), bytes_cell(b.allocated_bytes)});
    t.row({text("Mapping files"), count_cell(b.mapped), bytes_cell(b.mapped_bytes)});
    t.row({text("Slices and duplicates (no memory of their own)"), count_cell(b.views), text("")});
    t.row({text("Over native code's memory"), count_cell(b.foreign), bytes_cell(b.foreign_bytes)});
    t.row({text("Garbage, freed after a GC"), count_cell(b.unreachable), bytes_cell(b.unreachable_bytes)});
    body += t.html();
    if (b.jvm_reserved_bytes)
        body += paragraph("java.nio.Bits counts " + text::grouped(b.jvm_count.value_or(0)) + " buffers, " +
                          text::human_bytes(*b.jvm_reserved_bytes) + " reserved" +
                          (b.jvm_max_bytes ? " of its " + text::human_bytes(*b.jvm_max_bytes) + " limit" : "") + ".");
    return body + holders_table("buffer-holders-table", b.holders, "Buffers", true);
}

// Android's Bitmaps, where the dump has any.
std::string bitmaps(const bitmap_report& b) {
    if (b.heap + b.native + b.recycled + b.unreachable == 0) return "";
    std::string body = "<h3>Bitmaps</h3>\n";
    table t("bitmaps-table", {"Pixels", "Bitmaps", "Bytes"}, false, false);
    t.row({text("In the heap (a byte[] each)"), count_cell(b.heap), bytes_cell(b.heap_bytes)});
    t.row({text("Native, 4 bytes a pixel assumed"), count_cell(b.native), bytes_cell(b.native_bytes)});
    t.row({text("Recycled"), count_cell(b.recycled), text("")});
    t.row({text("Garbage, freed after a GC"), count_cell(b.unreachable), bytes_cell(b.unreachable_bytes)});
    body += t.html();
    table largest("bitmaps-largest-table", {"Bitmap", "Width", "Height", "Pixel bytes"}, false);
    for (const bitmap_entry& e : b.largest)
        largest.row({text(text::fmt("0x%llx", static_cast<unsigned long long>(e.id))), count_cell(e.width),
                     count_cell(e.height), bytes_cell(e.pixel_bytes)});
    body += largest.html();
    return body + holders_table("bitmap-holders-table", b.holders, "Bitmaps", true);
}

std::string threads(const thread_summary_report& t) {
    std::string states;
    for (const auto& [state, n] : t.states) states += (states.empty() ? ": " : ", ") + text::grouped(n) + " " + state;
    return "<h3>Threads</h3>\n" +
           paragraph(text::grouped(t.count) + " threads (" + text::grouped(t.daemon) + " daemon)" + states + ".") +
           groups_table("thread-names-table", t.by_name, "Name pattern") +
           groups_table("thread-stacks-table", t.by_stack, "Innermost frame") +
           holders_table("thread-holders-table", t.holders, "Threads", false);
}

std::string loaders(const class_loader_report& l) {
    std::string body =
        "<h3>Class loaders</h3>\n" +
        paragraph(text::grouped(l.loaders) + " class loaders defined " + text::grouped(l.classes - l.boot_classes) +
                  " classes, the boot loader " + text::grouped(l.boot_classes) +
                  (l.unreachable != 0 ? "; " + text::grouped(l.unreachable) + " loaders are garbage" : std::string()) +
                  ".");
    table by_class("loader-classes-table", {"Loader class", "Loaders", "Classes defined"}, false);
    for (const loader_class_entry& e : l.by_class)
        by_class.row({text(e.class_name), count_cell(e.loaders), count_cell(e.classes)});
    body += by_class.html();
    if (!l.duplicates.empty()) {
        table d("duplicate-classes-table", {"Class defined more than once", "Loaders"}, false);
        for (const duplicate_class_entry& e : l.duplicates) d.row({text(e.class_name), count_cell(e.loaders)});
        body += d.html();
    }
    return body + holders_table("loader-holders-table", l.holders, "Loaders", true);
}

}  // namespace

std::string off_heap_section(const analysis_report& r) {
    const off_heap_report& o = r.off_heap;
    if (!o.computed && o.threads.count == 0) return "";
    std::string body;
    if (o.computed) body += buffers(o.direct_buffers) + bitmaps(o.bitmaps);
    if (o.threads.count != 0) body += threads(o.threads);
    if (o.computed) body += loaders(o.class_loaders);
    return section("off-heap", "Off-heap memory, as the heap shows it", body);
}

}  // namespace html
}  // namespace report
}  // namespace heapd
