#pragma once
// The table of JVMs that `heapd jvms` (what hsperfdata says, no daemon) and `heapctl jvms` (what
// the daemon follows) print: one row type, one layout, each listing choosing its columns.
#include <string>
#include <vector>

namespace heapd {
inline namespace report {
namespace text {

// A column of the JVM table, in the order they are printed.
enum class jvm_column {
    pid,
    ns_pid,
    user,
    where,
    heap_used,
    heap_max,
    memory,
    old_gen,
    after_gc,
    gc_time,
    on_oom,
    version,
    main_class
};

// One JVM as the table shows it: each cell already text ("-" for nothing to show), pid as a number.
struct jvm_table_row {
    long long pid = 0;
    std::string ns_pid, user, where, heap_used, heap_max, memory, old_gen, after_gc, gc_time, on_oom, version,
        main_class;
};

// A header line and a line per row, columns two spaces apart and as wide as their widest cell; the
// PID right-aligned in seven characters as ps(1) prints it, the last column unpadded. Nothing for no rows.
std::string jvm_table_text(const std::vector<jvm_column>& columns, const std::vector<jvm_table_row>& rows);

}  // namespace text
}  // namespace report
}  // namespace heapd
