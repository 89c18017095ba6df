#include "formats/report/jvm_table.h"

#include "base/safe_text.h"

#include <algorithm>
#include <cstddef>

namespace heapd {
inline namespace report {
namespace text {
namespace {

const char* header_of(jvm_column c) {
    switch (c) {
    case jvm_column::pid: return "PID";
    case jvm_column::ns_pid: return "NSPID";
    case jvm_column::user: return "USER";
    case jvm_column::where: return "WHERE";
    case jvm_column::heap_used: return "HEAP USED";
    case jvm_column::heap_max: return "HEAP MAX";
    case jvm_column::memory: return "RSS/LIMIT";
    case jvm_column::old_gen: return "OLD GEN";
    case jvm_column::after_gc: return "AFTER GC";
    case jvm_column::gc_time: return "GC TIME";
    case jvm_column::on_oom: return "ON OOM";
    case jvm_column::version: return "VERSION";
    case jvm_column::main_class: return "MAIN CLASS";
    }
    return "?";
}

std::string cell_of(const jvm_table_row& r, jvm_column c) {
    switch (c) {
    case jvm_column::pid: return std::to_string(r.pid);
    case jvm_column::ns_pid: return r.ns_pid;
    case jvm_column::user: return r.user;
    case jvm_column::where: return r.where;
    case jvm_column::heap_used: return r.heap_used;
    case jvm_column::heap_max: return r.heap_max;
    case jvm_column::memory: return r.memory;
    case jvm_column::old_gen: return r.old_gen;
    case jvm_column::after_gc: return r.after_gc;
    case jvm_column::gc_time: return r.gc_time;
    case jvm_column::on_oom: return r.on_oom;
    case jvm_column::version: return r.version;
    case jvm_column::main_class: return r.main_class;
    }
    return "?";
}

// pid_max is at most 2^22 (4194304): seven digits.
constexpr std::size_t pid_width = 7;

}  // namespace

std::string jvm_table_text(const std::vector<jvm_column>& columns, const std::vector<jvm_table_row>& rows) {
    if (rows.empty() || columns.empty()) return {};
    std::vector<std::vector<std::string>> lines(1);
    for (jvm_column c : columns) lines[0].push_back(header_of(c));
    for (const jvm_table_row& r : rows) {
        lines.emplace_back();
        for (jvm_column c : columns) lines.back().push_back(line_safe(cell_of(r, c)));
    }
    std::vector<std::size_t> width(columns.size(), 0);
    for (const auto& line : lines)
        for (std::size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
    std::string out;
    for (const auto& line : lines) {
        for (std::size_t i = 0; i < line.size(); ++i) {
            const std::size_t pad = width[i] - line[i].size();
            if (columns[i] == jvm_column::pid) {
                out += std::string(std::max(width[i], pid_width) - line[i].size(), ' ') + line[i];
            } else {
                out += line[i];
                if (i + 1 < line.size()) out += std::string(pad, ' ');
            }
            if (i + 1 < line.size()) out += "  ";
        }
        out += '\n';
    }
    return out;
}

}  // namespace text
}  // namespace report
}  // namespace heapd
