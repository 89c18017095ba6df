// The JVM table both jvms listings print: a header, columns as wide as their widest cell, the PID
// right-aligned as ps prints it, and only the columns a listing asks for.
#include "formats/report/jvm_table.h"

#include <gtest/gtest.h>

namespace heapd {
inline namespace report {
namespace text {
namespace {

TEST(jvm_table, aligns_columns_under_their_headers) {
    jvm_table_row a;
    a.pid = 812;
    a.user = "root";
    a.heap_used = "12.0 MiB";
    a.main_class = "com.example.Shop";
    jvm_table_row b;
    b.pid = 4194304;
    b.user = "shopkeeper";
    b.heap_used = "1.5 GiB";
    b.main_class = "Grow";
    const std::string out =
        jvm_table_text({jvm_column::pid, jvm_column::user, jvm_column::heap_used, jvm_column::main_class}, {a, b});
    EXPECT_EQ(out,
              "    PID  USER        HEAP USED  MAIN CLASS\n"
              "    812  root        12.0 MiB   com.example.Shop\n"
              "4194304  shopkeeper  1.5 GiB    Grow\n");
}

TEST(jvm_table, shows_only_the_columns_asked_for_in_their_order) {
    jvm_table_row r;
    r.pid = 7;
    r.where = "container";
    r.on_oom = "oom-armed";
    r.version = "17.0.9";
    EXPECT_EQ(jvm_table_text({jvm_column::pid, jvm_column::where, jvm_column::on_oom}, {r}),
              "    PID  WHERE      ON OOM\n"
              "      7  container  oom-armed\n");
}

TEST(jvm_table, cells_from_other_users_processes_cannot_drive_the_terminal) {
    jvm_table_row r;
    r.pid = 7;
    r.main_class = "Evil\x1b]0;root shell\x07\x1b[2J";
    EXPECT_EQ(jvm_table_text({jvm_column::pid, jvm_column::main_class}, {r}),
              "    PID  MAIN CLASS\n"
              "      7  Evil\\x1b]0;root shell\\x07\\x1b[2J\n");
}

TEST(jvm_table, no_rows_print_nothing) { EXPECT_EQ(jvm_table_text({jvm_column::pid, jvm_column::user}, {}), ""); }

}  // namespace
}  // namespace text
}  // namespace report
}  // namespace heapd
