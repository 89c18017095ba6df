// Reads the peer dumps (files no one here wrote) and checks every figure against the summary an
// independent parser printed for them (the *-result.txt beside each dump), parsed at test time, and
// the duplicate strings against a plain count of the Strings' contents made here.
#include <gtest/gtest.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/analysis.h"
#include "analysis/census.h"
#include "formats/hprof/class_table.h"
#include "formats/hprof/heap_walk.h"
#include "formats/hprof/java_names.h"
#include "formats/hprof/java_strings.h"
#include "formats/hprof/mapped_file.h"
#include "formats/hprof/object_layout.h"
#include "formats/hprof/record_index.h"
#include "formats/report/report_json.h"

namespace heapd {
namespace {

// What the independent parser printed for a dump.
struct peer_summary {
    std::string captured;                         // "YYYY-MM-DD HH:MM:SS"
    std::map<std::string, std::uint64_t> counts;  // "Stack traces" -> 216, "GC root unknown" -> 54
    std::uint64_t heap_dumps = 0;
    std::uint64_t threads_found = 0;
    std::vector<std::vector<std::string>> threads;  // frames as printed, without "  at "
};

peer_summary read_summary(const std::string& path) {
    std::ifstream in(path);
    EXPECT_TRUE(in) << "cannot read " << path;
    static const std::regex captured(R"(^Dump captured at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC\.$)");
    static const std::regex count(R"(^(?:\.\.)?([A-Za-z0-9 -]+): (\d+)$)");
    static const std::regex dumps(R"(^(\d+) heap dumps containing in total \d+ segments:$)");
    static const std::regex found(R"(^Found (\d+) threads with stacktraces:$)");
    static const std::regex thread(R"(^Thread (\d+)$)");
    static const std::regex frame(R"(^  at (.+)$)");
    peer_summary s;
    std::string line;
    std::smatch m;
    bool in_threads = false;
    while (std::getline(in, line)) {
        if (std::regex_match(line, m, captured)) {
            s.captured = m[1];
        } else if (std::regex_match(line, m, dumps)) {
            s.heap_dumps = std::stoull(m[1]);
        } else if (std::regex_match(line, m, found)) {
            s.threads_found = std::stoull(m[1]);
            in_threads = true;
        } else if (line.starts_with("Found a total")) {
            in_threads = false;
        } else if (in_threads && std::regex_match(line, m, thread)) {
            EXPECT_EQ(std::stoull(m[1]), s.threads.size() + 1) << line;
            s.threads.emplace_back();
        } else if (in_threads && std::regex_match(line, m, frame)) {
            EXPECT_FALSE(s.threads.empty()) << line;
            if (!s.threads.empty()) s.threads.back().push_back(m[1]);
        } else if (!in_threads && std::regex_match(line, m, count)) {
            s.counts[m[1]] = std::stoull(m[2]);
        }
    }
    return s;
}

// A peer dump opened and read through the whole reader layer.
class peer_dump_test : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        const std::string base = std::string(HEAPD_PEER_DATA) + "/" + GetParam();
        summary_ = read_summary(base + "-result.txt");
        auto file = mapped_file::open(base + ".bin");
        ASSERT_TRUE(file.has_value()) << file.error().describe();
        file_ = std::move(*file);
        auto reader = hprof_reader::parse(file_.bytes());
        ASSERT_TRUE(reader.has_value()) << reader.error().describe();
        reader_ = *reader;
        index_ = record_index::build(reader_);
        for (const auto& p : index_.problems()) ADD_FAILURE() << p.describe();
        ASSERT_FALSE(index_.truncated());
    }

    census_result census() {
        class_table classes(index_);
        heap_census c(index_, classes, 20);
        problem_list problems;
        walk_heap(index_, c, &problems);
        for (const auto& p : problems.kept()) ADD_FAILURE() << p.describe();
        return c.finish();
    }

    // The figure the peer printed under this label; fails the test when it is missing.
    std::uint64_t peer(const std::string& label) {
        auto it = summary_.counts.find(label);
        if (it == summary_.counts.end()) {
            ADD_FAILURE() << "no \"" << label << "\" line in the peer summary";
            return ~std::uint64_t{0};
        }
        return it->second;
    }

    peer_summary summary_;
    mapped_file file_;
    hprof_reader reader_;
    record_index index_;
};

TEST_P(peer_dump_test, header_timestamp_matches_the_capture_time) {
    const std::time_t seconds = static_cast<std::time_t>(reader_.header().timestamp_ms / 1000);
    std::tm utc{};
    ASSERT_NE(gmtime_r(&seconds, &utc), nullptr);
    char text[32];
    ASSERT_GT(std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &utc), 0u);
    ASSERT_FALSE(summary_.captured.empty());
    EXPECT_EQ(text, summary_.captured);
}

TEST_P(peer_dump_test, top_level_record_counts_match) {
    // The peer counts classes by distinct class object id: a dump may load one class under several
    // serials (hprof-64 repeats LOAD_CLASS for the primitive array classes).
    std::set<std::uint64_t> class_ids;
    for (const loaded_class& c : index_.classes()) class_ids.insert(c.class_id);
    EXPECT_GE(index_.count(record_tag::load_class), class_ids.size());

    EXPECT_EQ(index_.count(record_tag::utf8), peer("UTF-8 Strings"));
    EXPECT_EQ(class_ids.size(), peer("Classes loaded"));
    EXPECT_EQ(index_.count(record_tag::unload_class), peer("Classes unloaded"));
    EXPECT_EQ(index_.count(record_tag::trace), peer("Stack traces"));
    EXPECT_EQ(index_.traces().size(), peer("Stack traces"));
    EXPECT_EQ(index_.count(record_tag::frame), peer("Stack frames"));
    EXPECT_EQ(index_.count(record_tag::start_thread), peer("Start threads"));
    EXPECT_EQ(index_.started_threads().size(), peer("Start threads"));
    EXPECT_EQ(index_.count(record_tag::alloc_sites), peer("Allocation sites"));
    EXPECT_EQ(index_.count(record_tag::end_thread), peer("End threads"));
    EXPECT_EQ(index_.count(record_tag::control_settings), peer("Control settings"));
    EXPECT_EQ(index_.count(record_tag::cpu_samples), peer("CPU samples"));
    EXPECT_EQ(index_.count(record_tag::heap_summary), peer("Heap summaries"));
    EXPECT_EQ(index_.heap_records().size(), summary_.heap_dumps);
    EXPECT_GT(summary_.heap_dumps, 0u);
}

TEST_P(peer_dump_test, gc_roots_and_heap_sub_record_counts_match) {
    census_result r = census();
    auto roots = [&](root_kind k) { return r.roots[static_cast<unsigned>(k)]; };
    EXPECT_EQ(roots(root_kind::unknown), peer("GC root unknown"));
    EXPECT_EQ(roots(root_kind::thread_object), peer("GC root thread objects"));
    EXPECT_EQ(roots(root_kind::jni_global), peer("GC root JNI global"));
    EXPECT_EQ(roots(root_kind::jni_local), peer("GC root JNI local"));
    EXPECT_EQ(roots(root_kind::java_frame), peer("GC root Java frame"));
    EXPECT_EQ(roots(root_kind::native_stack), peer("GC root native stack"));
    EXPECT_EQ(roots(root_kind::sticky_class), peer("GC root sticky class"));
    EXPECT_EQ(roots(root_kind::thread_block), peer("GC root thread block"));
    EXPECT_EQ(roots(root_kind::monitor_used), peer("GC root monitor used"));
    // The peer knows no Android root kinds; a JVM dump has none.
    for (root_kind k :
         {root_kind::interned_string, root_kind::finalizing, root_kind::debugger, root_kind::reference_cleanup,
          root_kind::vm_internal, root_kind::jni_monitor, root_kind::unreachable})
        EXPECT_EQ(roots(k), 0u) << root_kind_name(k);

    EXPECT_EQ(r.subrecord_counts[0x23] + r.subrecord_counts[0xC3], peer("GC primitive array dump"));
    EXPECT_EQ(r.subrecord_counts[0x22], peer("GC object array dump"));
    EXPECT_EQ(r.subrecord_counts[0x20], peer("GC class dump"));
    EXPECT_EQ(r.subrecord_counts[0x21], peer("GC instance dump"));
    EXPECT_EQ(r.primitive_arrays, peer("GC primitive array dump"));
    EXPECT_EQ(r.object_arrays, peer("GC object array dump"));
    EXPECT_EQ(r.classes, peer("GC class dump"));
    EXPECT_EQ(r.instances, peer("GC instance dump"));
}

// One frame as the peer prints it: "pkg.Class.method (File.java:line)".
std::string describe_frame(const record_index& idx, std::uint64_t frame_id) {
    const frame_info* f = idx.frame(frame_id);
    if (f == nullptr) return "<no FRAME record>";
    const loaded_class* c = idx.class_by_serial(f->class_serial);
    std::string cls = c ? std::string(idx.utf8(c->name_id)) : "<no LOAD_CLASS>";
    for (char& ch : cls)
        if (ch == '/') ch = '.';
    std::string_view method = idx.utf8(f->method_name_id);
    std::string_view file = idx.utf8(f->source_file_id);
    std::string line;
    switch (f->line) {
    case -1: line = "unknown line number"; break;
    case -2: line = "compiled method"; break;
    case -3: line = "native method"; break;
    default: line = std::to_string(f->line);
    }
    return cls + "." + std::string(method.empty() ? "unknown method name" : method) + " (" +
           std::string(file.empty() ? "unknown source file" : file) + ":" + line + ")";
}

TEST_P(peer_dump_test, stack_traces_with_frames_match_in_order) {
    // The peer lists the traces that have frames, by serial number.
    std::vector<const trace_info*> traces;
    for (const trace_info& t : index_.traces())
        if (!t.frame_ids.empty()) traces.push_back(&t);
    std::stable_sort(traces.begin(), traces.end(),
                     [](const trace_info* a, const trace_info* b) { return a->serial < b->serial; });

    ASSERT_GT(summary_.threads_found, 0u);
    EXPECT_EQ(traces.size(), summary_.threads_found);
    ASSERT_EQ(traces.size(), summary_.threads.size());
    const unsigned id = index_.id_size();
    for (std::size_t i = 0; i < traces.size(); ++i) {
        SCOPED_TRACE("Thread " + std::to_string(i + 1) + ", trace serial " + std::to_string(traces[i]->serial));
        std::vector<std::string> frames;
        for (std::size_t off = 0; off < traces[i]->frame_ids.size(); off += id)
            frames.push_back(describe_frame(index_, be::id(traces[i]->frame_ids.data() + off, id)));
        EXPECT_EQ(frames, summary_.threads[i]);
    }
}

// The contents of every String of a dump whose value is a char[] (both peer dumps are of JDK 8 or
// older), counted the plain way: the characters are value[offset, offset + count) when the class
// has those fields (hprof-32: JDK 6, where substrings share their array), else the whole array.
struct plain_strings : heap_visitor {
    const class_table* classes;
    std::uint64_t string_class = 0;
    std::vector<std::tuple<std::uint64_t, std::uint64_t, std::optional<std::uint64_t>>>
        strings;                                     // value, offset, count
    std::map<std::uint64_t, std::u16string> arrays;  // char[] id -> contents
    std::uint64_t ranged = 0;                        // Strings that hold less than their whole array

    void instance(const instance_view& v) {
        if (v.class_id != string_class) return;
        auto value = read_field(*classes, v, "value");
        if (!value || *value == 0) return;
        strings.emplace_back(*value, read_field(*classes, v, "offset").value_or(0), read_field(*classes, v, "count"));
    }
    void primitive_array(const primitive_array_view& v) {
        if (v.type != 5) return;
        std::u16string s;
        for (std::uint32_t i = 0; i < v.length; ++i) s += static_cast<char16_t>(be::u2(v.data.data() + 2 * i));
        arrays[v.id] = std::move(s);
    }
    // Contents -> copies, for contents held by more than one String.
    std::map<std::u16string, std::uint64_t> duplicates() {
        std::map<std::u16string, std::uint64_t> copies;
        for (const auto& [value, offset, count] : strings) {
            auto a = arrays.find(value);
            if (a == arrays.end()) continue;
            const std::uint64_t n = count.value_or(a->second.size());
            if (offset + n > a->second.size()) continue;
            if (n != a->second.size()) ++ranged;
            ++copies[a->second.substr(offset, n)];
        }
        std::erase_if(copies, [](const auto& c) { return c.second < 2; });
        return copies;
    }
};

TEST_P(peer_dump_test, duplicate_strings_match_a_plain_count_of_the_strings_contents) {
    class_table classes(index_);
    add_class_dumps(index_, classes);
    plain_strings plain;
    plain.classes = &classes;
    for (const loaded_class& c : index_.classes())
        if (same_class_name(index_.utf8(c.name_id), "java.lang.String")) plain.string_class = c.class_id;
    ASSERT_NE(plain.string_class, 0u);
    walk_heap(index_, plain, nullptr);
    const std::map<std::u16string, std::uint64_t> expected = plain.duplicates();
    std::uint64_t strings = 0;
    for (const auto& c : expected) strings += c.second;
    // hprof-32 holds 40 groups of 89 Strings, 'Sun Microsystems Inc.' four times; hprof-64, 127 of 448.
    ASSERT_GT(expected.size(), 30u);
    if (GetParam() == "hprof-32") {
        EXPECT_GT(plain.ranged, 0u) << "hprof-32's Strings hold ranges of their arrays";
        EXPECT_EQ(expected.at(u"Sun Microsystems Inc."), 4u);
    }

    analysis_options options;
    options.retained = false;
    options.threads = false;
    auto report = analyze_dump(file_.bytes(), options);
    ASSERT_TRUE(report.has_value()) << report.error().describe();
    const waste_report& w = report->waste;
    EXPECT_EQ(w.duplicate_string_groups, expected.size());
    EXPECT_EQ(w.duplicate_strings, strings);
    ASSERT_FALSE(w.duplicate_strings_top.empty());
    for (const duplicate_string_entry& e : w.duplicate_strings_top) {
        // The report shows at most string_display_chars characters; those shown are the group's.
        auto c = std::find_if(expected.begin(), expected.end(),
                              [&](const auto& x) { return x.first.size() == e.length && x.second == e.copies; });
        EXPECT_NE(c, expected.end()) << e.content << " x" << e.copies;
    }
    if (GetParam() == "hprof-32") {
        // The most it saves: four Strings, each with its own array of 21 chars.
        EXPECT_EQ(w.duplicate_strings_top[0].content, "Sun Microsystems Inc.");
        EXPECT_EQ(w.duplicate_strings_top[0].copies, 4u);
    }
}

// The JVM that wrote each dump, as the dump keeps it (sun.misc.Version's Strings). Their own paths
// agree: hprof-32's Strings name D:\jdk1.6.0\jre\lib\ext, hprof-64's /usr/lib/jvm/java-8-openjdk-amd64.
TEST_P(peer_dump_test, the_writer_and_java_version_are_read_from_the_dump) {
    analysis_options options;
    options.retained = false;
    options.waste = false;
    auto report = analyze_dump(file_.bytes(), options);
    ASSERT_TRUE(report.has_value()) << report.error().describe();
    const summary_report& s = report->summary;
    EXPECT_EQ(s.version_source, "sun.misc.Version");
    if (GetParam() == "hprof-32") {
        // Written by the old hprof agent of JDK 6 (its CONTROL SETTINGS and START THREAD records).
        EXPECT_EQ(s.writer, "hprof agent");
        EXPECT_EQ(s.java_version, "1.6.0-rc-b102");
        EXPECT_EQ(s.java_runtime, "Java(TM) SE Runtime Environment");
    } else {
        EXPECT_EQ(s.writer, "HotSpot heap dumper");
        EXPECT_EQ(s.java_version, "1.8.0_151-8u151-b12-0ubuntu0.16.04.2-b12");
        EXPECT_EQ(s.java_runtime, "OpenJDK Runtime Environment");
    }
}

// In both dumps the first suspect is the class objects together (their statics); it names the
// classes that retain most, the first of them the biggest retainer of the whole heap in hprof-32.
TEST_P(peer_dump_test, a_suspect_of_many_class_objects_names_the_classes_that_add_up) {
    auto report = analyze_dump(file_.bytes(), analysis_options{});
    ASSERT_TRUE(report.has_value()) << report.error().describe();
    const auto& suspects = report->retention.leak_suspects;
    ASSERT_FALSE(suspects.empty());
    const leak_suspect& first = suspects[0];
    ASSERT_TRUE(first.is_class);
    EXPECT_EQ(first.suspect.class_name, "java.lang.Class");
    ASSERT_EQ(first.biggest.size(), 5u);
    for (std::size_t i = 0; i < first.biggest.size(); ++i) {
        EXPECT_TRUE(first.biggest[i].class_name.starts_with("class ")) << first.biggest[i].class_name;
        if (i > 0) {
            EXPECT_LE(first.biggest[i].retained_bytes, first.biggest[i - 1].retained_bytes);
        }
    }
    if (GetParam() == "hprof-32") {
        EXPECT_EQ(first.biggest[0].class_name, "class java.lang.System");
        ASSERT_FALSE(report->retention.dominators.empty());
        EXPECT_EQ(first.biggest[0].id, report->retention.dominators[0].id);
        EXPECT_EQ(first.biggest[0].retained_bytes, report->retention.dominators[0].retained_bytes);
    }
}

// hprof-64 was written by HotSpot (JDK 8), whose object ids are addresses: the distance from an
// instance to the next object is its size wherever the two are adjacent, so the smallest distance
// seen per class is the JVM's own word on the size. heapd's sizes agree for every class that has an
// instance with an object right after it, Class objects aside (their sizes vary per class), and the
// addresses tell JDK 8's field rules apart from JDK 17's (each class's fields after its super's,
// no String.flags): more classes fit them exactly, and none is bigger than its room under them.
TEST_P(peer_dump_test, instance_sizes_agree_with_the_addresses_of_a_hotspot_dump) {
    if (GetParam() != "hprof-64") GTEST_SKIP() << "the old hprof agent's ids are not addresses";
    struct addresses : heap_visitor {
        std::vector<std::pair<std::uint64_t, std::uint64_t>> objects;  // id, class (0: not an instance)
        void class_dump(const class_dump_view& c) { objects.emplace_back(c.class_id(), 0); }
        void instance(const instance_view& v) { objects.emplace_back(v.id, v.class_id); }
        void object_array(const object_array_view& v) { objects.emplace_back(v.id, 0); }
        void primitive_array(const primitive_array_view& v) { objects.emplace_back(v.id, 0); }
    } walk;
    walk_heap(index_, walk, nullptr);
    std::sort(walk.objects.begin(), walk.objects.end());
    std::map<std::uint64_t, std::uint64_t> smallest_gap;
    for (std::size_t i = 0; i + 1 < walk.objects.size(); ++i) {
        const auto [id, cls] = walk.objects[i];
        if (cls == 0) continue;
        const std::uint64_t gap = walk.objects[i + 1].first - id;
        auto [it, added] = smallest_gap.emplace(cls, gap);
        if (!added) it->second = std::min(it->second, gap);
    }
    census_result c = census();
    EXPECT_EQ(c.layout, "64-bit, compressed oops");
    EXPECT_EQ(c.rules.java_feature, 8u);
    EXPECT_EQ(c.rules_source, "object addresses");
    std::size_t agree = 0;
    std::vector<std::string> differ;
    for (const auto& h : c.histogram) {
        auto gap = smallest_gap.find(h.class_id);
        if (gap == smallest_gap.end() || h.class_name == "java.lang.Class" || h.instances == 0) continue;
        const std::uint32_t* size = c.instance_sizes.find(h.class_id);
        ASSERT_NE(size, nullptr) << h.class_name;
        if (*size == gap->second)
            ++agree;
        else if (*size > gap->second)  // bigger than the room the JVM gave it: wrong
            differ.push_back(h.class_name + ": " + std::to_string(*size) + " B, room " + std::to_string(gap->second));
    }
    EXPECT_TRUE(differ.empty()) << testing::PrintToString(differ);
    EXPECT_GT(agree, 190u);

    // The field rules alone, before any gap corrects them.
    class_table classes(index_);
    add_class_dumps(index_, classes);
    auto fit = [&](unsigned java, std::vector<std::string>* too_big) {
        layout_model model(classes, *c.vm, field_rules{java});
        std::size_t exact = 0;
        for (const auto& [cls, gap] : smallest_gap) {
            if (classes.java_name(cls) == "java.lang.Class") continue;
            const std::uint32_t size = model.instance_size(cls);
            exact += size == gap;
            if (too_big != nullptr && size > gap)
                too_big->push_back(classes.java_name(cls) + ": " + std::to_string(size));
        }
        return exact;
    };
    std::vector<std::string> too_big_8;
    const std::size_t exact_8 = fit(8, &too_big_8), exact_17 = fit(17, nullptr);
    std::cout << "classes whose room JDK 8's rules fit exactly: " << exact_8 << ", JDK 17's: " << exact_17 << " of "
              << smallest_gap.size() << "\n";
    // The census measures only neighbours in dump order: fewer classes, most of them exact.
    EXPECT_GT(c.rules_agree * 10, c.rules_measured * 8);
    // JDK 8's rules fit all 200 (java.lang.Class aside); JDK 17's are short by 8 bytes on 6 of them,
    // java.security.Permissions (24, room 32) and sun.misc.Launcher$AppClassLoader (88, room 96) among them.
    EXPECT_EQ(exact_8, smallest_gap.size() - 1);
    EXPECT_GT(exact_8, exact_17);
    EXPECT_TRUE(too_big_8.empty()) << testing::PrintToString(too_big_8);
}

// hprof-32 was written by JDK 6's hprof agent on 32 bits: ids are not addresses, so the fields of
// java.lang.String (value, offset, count, hash) tell the release, and a String is 24 bytes, the
// size Eclipse MAT's tests assert for the Strings of their 32-bit JDK 6 dumps.
TEST_P(peer_dump_test, an_old_dump_is_sized_by_the_rules_of_its_release) {
    if (GetParam() != "hprof-32") GTEST_SKIP() << "hprof-64's release is told by addresses (above)";
    census_result c = census();
    EXPECT_EQ(c.rules.java_feature, 6u);
    EXPECT_EQ(c.rules_source, "the fields of java.lang.String");
    EXPECT_EQ(c.rules_measured, 0u);
    auto size_of = [&](std::string_view name) -> std::uint32_t {
        for (const auto& h : c.histogram)
            if (h.class_name == name) return *c.instance_sizes.find(h.class_id);
        return 0;
    };
    EXPECT_EQ(size_of("java.lang.String"), 24u);
    EXPECT_EQ(size_of("java.util.HashMap$Entry"), 24u);  // key, value, next, hash: 8 + 16
}

// A heap of 2^32 - 1 objects or more is analysed with 64-bit node numbers; forced here on a real
// JVM's dump by lowering the limit: the same report, retained sizes, suspects and paths included.
TEST_P(peer_dump_test, sixty_four_bit_node_numbers_give_the_same_report) {
    analysis_options narrow;
    narrow.largest = 100;
    narrow.all_retained_classes = true;
    narrow.suspect_threshold = 0.01;
    analysis_options wide = narrow;
    wide.narrow_nodes_below = 1;
    auto one = analyze_dump(file_.bytes(), narrow);
    auto other = analyze_dump(file_.bytes(), wide);
    ASSERT_TRUE(one.has_value() && other.has_value());
    ASSERT_TRUE(one->retention.computed);
    EXPECT_FALSE(one->retention.leak_suspects.empty());
    EXPECT_EQ(to_json(*other).dump(1), to_json(*one).dump(1));
}

INSTANTIATE_TEST_SUITE_P(peers, peer_dump_test, ::testing::Values("hprof-32", "hprof-64"),
                         [](const auto& info) { return info.param == "hprof-32" ? "hprof_32" : "hprof_64"; });

}  // namespace
}  // namespace heapd
