// Tests of the text report: byte and time formats, every section, row limits and line widths.
#include "formats/report/report_text.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace heapd {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

std::size_t count_prefixed(const std::vector<std::string>& lines, std::string_view prefix) {
    std::size_t n = 0;
    for (const auto& l : lines) n += l.starts_with(prefix);
    return n;
}

bool has_line(const std::vector<std::string>& lines, std::string_view line) {
    return std::find(lines.begin(), lines.end(), line) != lines.end();
}

TEST(human_bytes, bytes_below_one_kib_are_exact) {
    EXPECT_EQ(text::human_bytes(0), "0 B");
    EXPECT_EQ(text::human_bytes(1), "1 B");
    EXPECT_EQ(text::human_bytes(312), "312 B");
    EXPECT_EQ(text::human_bytes(1023), "1023 B");
}

TEST(human_bytes, larger_sizes_have_three_significant_digits_in_binary_units) {
    EXPECT_EQ(text::human_bytes(1024), "1.00 KiB");
    EXPECT_EQ(text::human_bytes(1025), "1.00 KiB");
    EXPECT_EQ(text::human_bytes(1536), "1.50 KiB");
    EXPECT_EQ(text::human_bytes(10 * 1024), "10.0 KiB");
    EXPECT_EQ(text::human_bytes(100 * 1024), "100 KiB");
    EXPECT_EQ(text::human_bytes(1023 * 1024), "1023 KiB");
    EXPECT_EQ(text::human_bytes(1024 * 1024), "1.00 MiB");
    EXPECT_EQ(text::human_bytes(1536 * 1024), "1.50 MiB");
    EXPECT_EQ(text::human_bytes(12345678), "11.8 MiB");
    EXPECT_EQ(text::human_bytes(6'000'000'000), "5.59 GiB");
    EXPECT_EQ(text::human_bytes(100ull << 30), "100 GiB");
    EXPECT_EQ(text::human_bytes(1ull << 40), "1.00 TiB");
    EXPECT_EQ(text::human_bytes(1ull << 50), "1.00 PiB");
    EXPECT_EQ(text::human_bytes(1ull << 60), "1024 PiB");  // no larger unit
    EXPECT_EQ(text::human_bytes(~0ull), "16384 PiB");
}

TEST(human_bytes, values_that_round_up_to_the_next_width_keep_three_digits) {
    EXPECT_EQ(text::human_bytes(10239), "10.0 KiB");
    EXPECT_EQ(text::human_bytes(102399), "100 KiB");
    EXPECT_EQ(text::human_bytes(1048575), "1.00 MiB");
}

TEST(utc_time, formats_milliseconds_since_the_epoch_in_utc) {
    EXPECT_EQ(text::utc_time(0), "1970-01-01 00:00:00 UTC");
    EXPECT_EQ(text::utc_time(999), "1970-01-01 00:00:00 UTC");
    EXPECT_EQ(text::utc_time(1700000000123), "2023-11-14 22:13:20 UTC");
    EXPECT_EQ(text::utc_time(951782400000), "2000-02-29 00:00:00 UTC");
    EXPECT_EQ(text::utc_time(253402300799000), "9999-12-31 23:59:59 UTC");
}

// A small report whose whole rendering is checked character for character.
analysis_report small_report() {
    analysis_report r;
    summary_report& s = r.summary;
    s.file_bytes = 1536;
    s.format = "JAVA PROFILE 1.0.2";
    s.id_size = 8;
    s.layout = "64-bit, compressed oops";
    s.instances = 3;
    s.object_arrays = 1;
    s.primitive_arrays = 2;
    s.classes = 4;
    s.shallow_bytes = 1000;
    s.records = {{"UTF8", 7}, {"LOAD_CLASS", 4}, {"HEAP_DUMP_SEGMENT", 1}};
    s.gc_roots = {{"sticky_class", 4}, {"thread_object", 1}};
    r.histogram = {{0, "byte[]", 2, 600}, {0x100, "demo.Point", 3, 300}, {0x101, "java.lang.Object[]", 1, 100}};
    r.largest_objects = {{0x10, 0, "byte[]", 584, 568, true}, {0x20, 0x100, "demo.Point", 100, 0, false}};
    r.threads = {{"main", "RUNNABLE", false, {"demo.Main.main(Main.java:10)"}}, {"Finalizer", "WAITING", true, {}}};
    r.problems = {{"unknown top-level record tag 0x55 skipped (11 bytes)", 31, false}};
    return r;
}

TEST(render_text, renders_a_small_report_exactly) {
    const std::string expected =
        "heapd analyze: <memory>\n"
        "  Dump     JAVA PROFILE 1.0.2, 8-byte ids, taken 1970-01-01 00:00:00 UTC, 1.50 KiB\n"
        "  Layout   64-bit, compressed oops (assumed: object ids are not addresses)\n"
        "  Heap     1000 B in 6 objects of 4 classes\n"
        "           3 instances, 1 object arrays, 2 primitive arrays\n"
        "  Roots    5 GC roots: sticky_class 4, thread_object 1\n"
        "  Records  UTF8 7, LOAD_CLASS 4, HEAP_DUMP_SEGMENT 1\n"
        "\n"
        "Warnings\n"
        "  ! unknown top-level record tag 0x55 skipped (11 bytes) (at file offset 31)\n"
        "\n"
        "Class histogram (top 3 by shallow size)\n"
        "     #     Instances       Bytes  Share  Class\n"
        "     1             2       600 B  60.0%  byte[]\n"
        "     2             3       300 B  30.0%  demo.Point\n"
        "     3             1       100 B  10.0%  java.lang.Object[]\n"
        "\n"
        "Largest objects (top 2 by shallow size)\n"
        "     #       Bytes  Id               Class\n"
        "     1       584 B  0x10             byte[] (length 568)\n"
        "     2       100 B  0x20             demo.Point\n"
        "\n"
        "Threads (2)\n"
        "  \"main\" RUNNABLE\n"
        "      at demo.Main.main(Main.java:10)\n"
        "  \"Finalizer\" daemon WAITING\n";
    EXPECT_EQ(render_text(small_report(), {}), expected);
}

std::size_t count_of(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// A class and a thread named with a newline and a right-to-left override cannot start a line of
// their own or reorder one: each is printed on its line, escaped, in every section.
TEST(render_text, names_with_newlines_and_bidirectional_controls_stay_on_their_line) {
    const std::string forged = "com.x.A\nheapd[868] info: FORGED\xE2\x80\xAEgpj.exe";
    analysis_report r = small_report();
    r.histogram[1].class_name = forged;
    r.largest_objects[1].class_name = forged;
    r.threads[0].name = forged;
    r.threads[0].frames = {forged + ".run(A.java:1)"};
    const std::string text = render_text(r, {});
    EXPECT_EQ(text.find("\nheapd[868]"), std::string::npos) << text;
    EXPECT_EQ(text.find("\xE2\x80\xAE"), std::string::npos);
    EXPECT_GE(count_of(text, "com.x.A\\nheapd[868] info: FORGED\\u202egpj.exe"), 4u) << text;
}

TEST(render_text, empty_sections_are_left_out) {
    analysis_report r = small_report();
    r.problems.clear();
    r.largest_objects.clear();
    r.threads.clear();
    r.summary.file = "/tmp/x.hprof";
    r.summary.layout_inferred = true;
    r.summary.timestamp_ms = 1700000000123;
    const std::string text = render_text(r, {});
    const auto lines = lines_of(text);
    EXPECT_EQ(lines.at(0), "heapd analyze: /tmp/x.hprof");
    EXPECT_EQ(lines.at(1), "  Dump     JAVA PROFILE 1.0.2, 8-byte ids, taken 2023-11-14 22:13:20 UTC, 1.50 KiB");
    EXPECT_EQ(lines.at(2), "  Layout   64-bit, compressed oops (inferred from object addresses)");
    EXPECT_EQ(text.find("Warnings"), std::string::npos);
    EXPECT_EQ(text.find("Largest objects"), std::string::npos);
    EXPECT_EQ(text.find("Threads"), std::string::npos);
    EXPECT_EQ(text.find("Profiler records"), std::string::npos);
    EXPECT_NE(text.find("Class histogram (top 3 by shallow size)"), std::string::npos);
}

TEST(render_text, an_empty_report_still_has_its_header_and_histogram_title) {
    analysis_report r;
    r.summary.format = "JAVA PROFILE 1.0.1";
    r.summary.id_size = 4;
    const auto lines = lines_of(render_text(r, {}));
    EXPECT_TRUE(has_line(lines, "  Heap     0 B in 0 objects of 0 classes"));
    EXPECT_TRUE(has_line(lines, "  Roots    "));
    EXPECT_TRUE(has_line(lines, "Class histogram (top 0 by shallow size)"));
    EXPECT_EQ(lines.back(), "     #     Instances       Bytes  Share  Class");
}

// Realistic class names and frames, a row count well above the default top, and every section.
analysis_report realistic_report() {
    analysis_report r;
    summary_report& s = r.summary;
    s.file = "/var/lib/heapd/dumps/orders-service-7f9c4d-2023-11-14T22-13-20.hprof.gz";
    s.file_bytes = 6'000'000'000;
    s.format = "JAVA PROFILE 1.0.2";
    s.id_size = 8;
    s.timestamp_ms = 1700000000123;
    s.layout = "64-bit, compressed oops";
    s.layout_inferred = true;
    s.instances = 98'765'432;
    s.object_arrays = 1'234'567;
    s.primitive_arrays = 23'456'789;
    s.classes = 28'413;
    s.shallow_bytes = 5'432'123'456;
    for (const char* k : {"unknown", "jni_global", "jni_local", "java_frame", "native_stack", "sticky_class",
                          "thread_block", "monitor_used", "thread_object", "interned_string", "finalizing", "debugger",
                          "reference_cleanup", "vm_internal", "jni_monitor", "unreachable"})
        s.gc_roots.emplace_back(k, 1'234'567);
    for (const char* k :
         {"UTF8", "LOAD_CLASS", "UNLOAD_CLASS", "FRAME", "TRACE", "ALLOC_SITES", "HEAP_SUMMARY", "START_THREAD",
          "END_THREAD", "HEAP_DUMP", "CPU_SAMPLES", "CONTROL_SETTINGS", "HEAP_DUMP_SEGMENT", "HEAP_DUMP_END"})
        s.records.emplace_back(k, 12'345'678);
    const char* names[] = {"byte[]",
                           "java.lang.String",
                           "java.util.concurrent.ConcurrentHashMap$Node",
                           "java.lang.Object[]",
                           "io.netty.buffer.PoolSubpage",
                           "com.example.orders.OrderLine",
                           "org.hibernate.engine.internal.StatefulPersistenceContext"};
    for (unsigned i = 0; i < 30; ++i)
        r.histogram.push_back({0x7f000000u + i, names[i % std::size(names)], 12'345'678u - i, 987'654'321u - i * 1000});
    for (unsigned i = 0; i < 30; ++i) {
        const std::string name = names[i % std::size(names)];
        const bool array = name.ends_with("[]");
        r.largest_objects.push_back(
            {0x7ffe00000000u + i * 0x1000, 1, name, 1'073'741'840u - i, array ? 1'073'741'824u : 0, array});
    }
    std::vector<std::string> deep;
    for (unsigned i = 0; i < 40; ++i)
        deep.push_back("com.example.orders.service.OrderRepositoryImpl.findByCustomer(OrderRepositoryImpl.java:" +
                       std::to_string(100 + i) + ")");
    r.threads = {
        {"main", "WAITING", false, {"java.lang.Object.wait(Native Method)", "java.lang.Thread.join(Thread.java:1305)"}},
        {"http-nio-8080-exec-17", "RUNNABLE", true, deep},
        {"G1 Conc#0", "", std::nullopt, {}}};
    r.problems = {{"unknown top-level record tag 0x55 skipped (11 bytes)", 5'123'456'789, false},
                  {"INSTANCE_DUMP sub-record runs past the end of its heap dump segment", 4'000'000'000, false}};
    legacy_report& l = r.legacy;
    l.sites_total_live_bytes = 292864;
    l.sites_total_live_instances = 2926;
    const char* site_names[] = {"char[]",
                                "java.lang.String",
                                "java.util.HashMap$Node",
                                "java.lang.Object[]",
                                "java.util.LinkedHashMap$Entry",
                                "sun.security.util.ObjectIdentifier"};
    for (unsigned i = 0; i < 30; ++i)
        l.alloc_sites.push_back(
            {site_names[i % std::size(site_names)], 300000 + i, 9000u - i * 10, 90u - i, 9'876'543u, 98'765u});
    l.cpu_total_samples = 10000;
    for (unsigned i = 0; i < 30; ++i)
        l.cpu_samples.emplace_back(
            1000 - i, "com.example.orders.OrderService.place(OrderService.java:" + std::to_string(200 + i) + ")");
    l.heap_summary_live = std::pair<std::uint64_t, std::uint64_t>{292864, 2926};
    l.heap_summary_allocated = std::pair<std::uint64_t, std::uint64_t>{1'000'000, 9000};
    l.control_flags = 1;
    l.control_stack_depth = 4;
    return r;
}

TEST(render_text, a_realistic_report_stays_under_100_columns) {
    for (unsigned top : {0u, 5u, 20u}) {
        SCOPED_TRACE(top);
        const std::string text = render_text(realistic_report(), {top, 0});
        for (const auto& line : lines_of(text)) EXPECT_LE(line.size(), 100u) << line;
    }
}

TEST(render_text, long_root_and_record_lists_wrap_with_an_indent) {
    const auto lines = lines_of(render_text(realistic_report(), {}));
    std::size_t roots = 0;
    while (roots < lines.size() && !lines[roots].starts_with("  Roots    ")) ++roots;
    ASSERT_LT(roots, lines.size());
    EXPECT_TRUE(lines[roots].starts_with("  Roots    19,753,072 GC roots: unknown 1,234,567, jni_global 1,234,567,"))
        << lines[roots];
    std::string joined = lines[roots].substr(11);
    std::size_t i = roots + 1;
    for (; i < lines.size() && lines[i].starts_with("           ") && !lines[i].starts_with("            "); ++i)
        joined += " " + lines[i].substr(11);
    EXPECT_GE(i - roots, 3u);  // 16 kinds take at least three lines
    EXPECT_TRUE(joined.ends_with("jni_monitor 1,234,567, unreachable 1,234,567")) << joined;
    EXPECT_EQ(std::count(joined.begin(), joined.end(), ','), 2 + 16 * 2 + 15);  // total, counts, separators
    ASSERT_LT(i, lines.size());
    EXPECT_TRUE(lines[i].starts_with("  Records  UTF8 12,345,678, LOAD_CLASS 12,345,678,")) << lines[i];
}

TEST(render_text, tables_respect_top) {
    const analysis_report r = realistic_report();
    const auto lines = lines_of(render_text(r, {5, 32}));
    EXPECT_TRUE(has_line(lines, "Class histogram (top 5 by shallow size)"));
    EXPECT_TRUE(has_line(lines, "Largest objects (top 5 by shallow size)"));
    // Histogram and largest-object rows both start with a right-aligned rank.
    EXPECT_EQ(count_prefixed(lines, "     5 "), 2u);
    EXPECT_EQ(count_prefixed(lines, "     6 "), 0u);
    EXPECT_TRUE(has_line(lines, "  ... 25 more sites"));
    EXPECT_EQ(count_prefixed(lines, "    5 "), 2u);  // the fifth site and the fifth CPU sample
    EXPECT_EQ(count_prefixed(lines, "    6 "), 0u);

    const auto all = lines_of(render_text(r, {0, 32}));
    EXPECT_TRUE(has_line(all, "Class histogram (top 30 by shallow size)"));
    EXPECT_TRUE(has_line(all, "Largest objects (top 30 by shallow size)"));
    EXPECT_EQ(count_prefixed(all, "    30 "), 2u);
    EXPECT_EQ(count_prefixed(all, "   30 "), 2u);
    EXPECT_EQ(count_prefixed(all, "  ... "), 0u);
}

TEST(render_text, stacks_are_cut_at_max_frames) {
    const analysis_report r = realistic_report();
    const auto cut = lines_of(render_text(r, {20, 32}));
    EXPECT_EQ(count_prefixed(cut, "      at "), 2u + 32);
    EXPECT_TRUE(has_line(cut, "      ... 8 more"));
    EXPECT_TRUE(has_line(cut, "  \"http-nio-8080-exec-17\" daemon RUNNABLE"));
    EXPECT_TRUE(has_line(cut, "  \"main\" WAITING"));
    EXPECT_TRUE(has_line(cut, "  \"G1 Conc#0\""));
    EXPECT_TRUE(has_line(cut, "Threads (3)"));
    const auto all = lines_of(render_text(r, {20, 0}));
    EXPECT_EQ(count_prefixed(all, "      at "), 2u + 40);
    EXPECT_EQ(count_prefixed(all, "      ... "), 0u);
}

TEST(render_text, the_old_agent_records_read_like_the_agent_wrote_them) {
    analysis_report r = small_report();
    legacy_report& l = r.legacy;
    l.sites_total_live_bytes = 292864;
    l.sites_total_live_instances = 2926;
    l.alloc_sites = {{"char[]", 300000, 63496, 692, 63496, 692}, {"byte[]", 300000, 25352, 9, 25352, 9}};
    l.cpu_total_samples = 10;
    l.cpu_samples = {{7, "demo.Worker.run(Worker.java:42)"}, {3, "<trace 9>"}};
    l.heap_summary_live = std::pair<std::uint64_t, std::uint64_t>{4096, 12};
    l.heap_summary_allocated = std::pair<std::uint64_t, std::uint64_t>{8192, 20};
    l.control_flags = 1;
    l.control_stack_depth = 4;
    const std::string text = render_text(r, {});
    const std::string expected_tail =
        "\n"
        "Profiler records (old hprof agent)\n"
        "  Control settings: allocation traces on, CPU sampling off, stack depth 4\n"
        "  Heap summary: 4096 live bytes in 12 instances; 8192 bytes in 20 instances allocated\n"
        "\n"
        "SITES BEGIN (ordered by live bytes)\n"
        "          percent          live          alloc'ed  stack class\n"
        " rank   self  accum     bytes objs     bytes  objs trace name\n"
        "    1 21.68% 21.68%     63496  692     63496   692 300000 char[]\n"
        "    2  8.66% 30.34%     25352    9     25352     9 300000 byte[]\n"
        "SITES END\n"
        "\n"
        "CPU SAMPLES BEGIN (total = 10)\n"
        " rank   self  count method\n"
        "    1 70.00%      7 demo.Worker.run(Worker.java:42)\n"
        "    2 30.00%      3 <trace 9>\n"
        "CPU SAMPLES END\n";
    ASSERT_GE(text.size(), expected_tail.size());
    EXPECT_EQ(text.substr(text.size() - expected_tail.size()), expected_tail);

    l.control_flags = 2;
    const std::string flipped = render_text(r, {});
    EXPECT_NE(flipped.find("  Control settings: allocation traces off, CPU sampling on, stack depth 4\n"),
              std::string::npos);
}

// A waste report with two rows in each table.
waste_report small_waste() {
    waste_report w;
    w.computed = true;
    w.duplicate_string_groups = 2;
    w.duplicate_strings = 1004;
    w.duplicate_string_saving = 56'088;
    w.duplicate_strings_top = {{"waste-dup-latin", 15, 1000, 55'944}, {"a\\tb", 3, 4, 144}};
    w.collections = {{"demo.SparseMap", 300, 0, 300, 302'400}, {"java.util.HashMap", 1'234, 2, 10, 1'000}};
    w.collection_saving = 303'400;
    w.boxed = {{"java.lang.Long", 5'256, 126'144, 356, 117'600}, {"java.lang.Boolean", 2, 32, 2, 0}};
    w.boxed_saving = 117'600;
    w.zero_arrays = {{"short[]", 704, 152'064}, {"int[]", 4, 576}};
    w.zero_array_saving = 152'640;
    w.saving_bytes = 56'088 + 303'400 + 117'600 + 152'640;
    return w;
}

TEST(render_text, renders_the_waste_after_the_largest_objects) {
    analysis_report r = small_report();
    r.summary.shallow_bytes = 2'000'000;
    r.waste = small_waste();
    const std::string expected =
        "\n"
        "Waste (615 KiB could be saved, 31.5% of the heap)\n"
        "  Duplicate strings  54.8 KiB  1,004 Strings in 2 groups of equal contents\n"
        "  Collections         296 KiB  2 empty, 310 sparse of 1,534 maps and lists\n"
        "  Boxed primitives    115 KiB  5,258 boxes of 358 distinct values\n"
        "  Zero arrays         149 KiB  708 primitive arrays of zeros only\n"
        "\n"
        "Duplicate strings (top 2 by saving)\n"
        "     #   Copies    Saving  Contents (length)\n"
        "     1    1,000  54.6 KiB  \"waste-dup-latin\" (15)\n"
        "     2        4     144 B  \"a\\tb\" (3)\n"
        "\n"
        "Empty and sparse collections (top 2 by saving)\n"
        "     #     Count     Empty    Sparse    Saving  Class\n"
        "     1       300         0       300   295 KiB  demo.SparseMap\n"
        "     2     1,234         2        10    1000 B  java.util.HashMap\n"
        "\n"
        "Boxed primitives\n"
        "     #     Count     Bytes  Distinct    Saving  Class\n"
        "     1     5,256   123 KiB       356   115 KiB  java.lang.Long\n"
        "     2         2      32 B         2       0 B  java.lang.Boolean\n"
        "\n"
        "Primitive arrays of zeros only\n"
        "     #     Count     Bytes  Type\n"
        "     1       704   148 KiB  short[]\n"
        "     2         4     576 B  int[]\n"
        "\n"
        "Threads (2)\n";
    const std::string text = render_text(r, {});
    const std::size_t from = text.find("\nWaste ("), to = text.find("Threads (2)\n");
    ASSERT_NE(from, std::string::npos);
    ASSERT_NE(to, std::string::npos);
    EXPECT_GT(from, text.find("Largest objects"));
    EXPECT_EQ(text.substr(from, to + 12 - from), expected);
    // Not computed: no section.
    EXPECT_EQ(render_text(small_report(), {}).find("Waste"), std::string::npos);
}

TEST(render_text, waste_tables_respect_top_and_stay_under_100_columns) {
    analysis_report r = realistic_report();
    r.waste.computed = true;
    for (unsigned i = 0; i < 30; ++i) {
        // 50 characters cut with "...", as the waste pass shortens contents.
        r.waste.duplicate_strings_top.push_back(
            {"jdbc:postgresql://orders-db.internal:5432/orders?ss...", 1'234'567, 9'999'999, 999'999'999'999});
        r.waste.collections.push_back(
            {"java.util.concurrent.ConcurrentHashMap", 12'345'678, 1'234'567, 9'999'999, 999'999'999'999});
    }
    r.waste.boxed.push_back({"java.lang.Character", 123'456'789, 1'975'308'624, 65'536, 1'974'260'048});
    r.waste.zero_arrays.push_back({"boolean[]", 123'456'789, 999'999'999'999});
    r.waste.duplicate_strings = r.waste.duplicate_string_groups = 123'456'789;
    for (unsigned top : {0u, 5u, 20u}) {
        SCOPED_TRACE(top);
        const std::string text = render_text(r, {top, 0});
        for (const auto& line : lines_of(text)) EXPECT_LE(line.size(), 100u) << line;
        const unsigned n = top == 0 ? 30 : top;
        EXPECT_NE(text.find("Duplicate strings (top " + std::to_string(n) + " by saving)"), std::string::npos);
        EXPECT_NE(text.find("Empty and sparse collections (top " + std::to_string(n) + " by saving)"),
                  std::string::npos);
    }
}

TEST(render_text, a_truncation_warning_stays_under_100_columns) {
    analysis_report r = small_report();
    r.problems = {
        {"file ends inside a HEAP_DUMP_SEGMENT record: the dump was cut short; showing what was read "
         "before the cut",
         5'000'000'000, true}};
    for (const auto& line : lines_of(render_text(r, {}))) EXPECT_LE(line.size(), 100u) << line;
}

TEST(render_text, long_suspect_lists_wrap_after_a_comma_under_100_columns) {
    analysis_report r;
    r.retention.computed = true;
    r.retention.suspect_threshold = 0.1;
    leak_suspect one;
    one.suspect = {0x7f00, "sun.misc.Launcher$AppClassLoader", 96, 65000};
    one.accumulation = {0x7f80, "sun.misc.URLClassPath", 48, 59000};
    one.retained_bytes = 65000;
    one.share = 0.236;
    leak_suspect many;
    many.is_class = true;
    many.suspect = {0x8000, "java.lang.Class", 96, 1000};
    many.instances = 434;
    many.retained_bytes = 120000;
    many.share = 0.439;
    for (const char* name :
         {"sun.misc.URLClassPath$JarLoader", "java.util.HashMap", "java.lang.String", "java.net.URL",
          "java.util.ArrayList", "java.lang.ThreadLocal$ThreadLocalMap$Entry[]", "java.security.cert.Certificate[]"}) {
        one.accumulated.push_back({name, 11, 54000});
        many.held_by.push_back({name, 431, 120000});
    }
    r.retention.leak_suspects = {many, one};
    const auto lines = lines_of(render_text(r, {}));
    std::string held, accumulates;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        EXPECT_LE(lines[i].size(), 100u) << lines[i];
        auto gather = [&](std::string& into) {
            into = lines[i];
            for (std::size_t k = i + 1; k < lines.size() && lines[k].starts_with("        "); ++k)
                into += " " + lines[k].substr(8);
        };
        if (lines[i].starts_with("     ")) {
            EXPECT_FALSE(lines[i].ends_with(" ")) << lines[i];
        }
        if (lines[i].starts_with("     held by ")) gather(held);
        if (lines[i].starts_with("     accumulates in ")) gather(accumulates);
    }
    EXPECT_NE(held.find("431 java.util.HashMap (117 KiB), 431 java.lang.String (117 KiB), 431 java.net.URL"),
              std::string::npos)
        << held;
    EXPECT_TRUE(held.ends_with("431 java.security.cert.Certificate[] (117 KiB)")) << held;
    EXPECT_TRUE(accumulates.starts_with("     accumulates in sun.misc.URLClassPath 0x7f80 (57.6 KiB): 11 "))
        << accumulates;
    EXPECT_TRUE(accumulates.ends_with("11 java.security.cert.Certificate[] (52.7 KiB)")) << accumulates;
}

}  // namespace
}  // namespace heapd
