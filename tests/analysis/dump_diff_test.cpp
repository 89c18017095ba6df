// Tests of `heapd diff`'s comparison: classes matched by name, new and gone classes, the growth
// order, totals, the top cut, 64-bit extremes; then two synthetic dumps analyzed and compared, and
// the diff's JSON and text forms.
#include "analysis/dump_diff.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "formats/report/report_json.h"
#include "formats/report/report_text.h"
#include "support/hprof_builder.h"

namespace heapd {
namespace {

constexpr std::uint64_t u64_max = std::numeric_limits<std::uint64_t>::max();
constexpr std::int64_t i64_max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t i64_min = std::numeric_limits<std::int64_t>::min();

// A report as analyze_dump fills it for a diff: histogram rows and, when given, retained sizes.
struct report_builder {
    analysis_report r;
    report_builder& row(std::uint64_t id, const std::string& name, std::uint64_t instances, std::uint64_t bytes) {
        r.histogram.push_back({id, name, instances, bytes});
        r.summary.instances += instances;
        r.summary.shallow_bytes += bytes;
        return *this;
    }
    report_builder& retained(const std::string& name, std::uint64_t bytes) {
        r.retention.computed = true;
        r.retention.retained_by_class.push_back({name, bytes});
        return *this;
    }
    report_builder& reachable(std::uint64_t objects, std::uint64_t bytes) {
        r.retention.computed = true;
        r.retention.reachable_objects = objects;
        r.retention.reachable_bytes = bytes;
        return *this;
    }
    operator analysis_report() const { return r; }
};

std::vector<std::string> names(const std::vector<class_diff_entry>& rows) {
    std::vector<std::string> out;
    for (const auto& e : rows) out.push_back(e.class_name);
    return out;
}

const class_diff_entry* find(const diff_report& d, const std::string& name) {
    for (const auto* list : {&d.grew, &d.shrank})
        for (const auto& e : *list)
            if (e.class_name == name) return &e;
    return nullptr;
}

TEST(dump_diff, classes_are_matched_by_name_not_by_id) {
    analysis_report before = report_builder{}.row(0x100, "demo.Session", 10, 320).row(0, "byte[]", 4, 400);
    analysis_report after = report_builder{}.row(0x9000, "demo.Session", 15, 480).row(0x77, "byte[]", 6, 600);
    diff_report d = diff_analyses(before, after, 0);
    ASSERT_EQ(d.grew.size(), 2u);
    EXPECT_TRUE(d.shrank.empty());
    const class_diff_entry* s = find(d, "demo.Session");
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->instances_before, 10u);
    EXPECT_EQ(s->instances_after, 15u);
    EXPECT_EQ(s->instances_delta, 5);
    EXPECT_EQ(s->shallow_delta, 160);
    EXPECT_FALSE(s->added);
    EXPECT_FALSE(s->removed);
    const class_diff_entry* b = find(d, "byte[]");
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->instances_delta, 2);
    EXPECT_EQ(b->shallow_delta, 200);
}

TEST(dump_diff, rows_of_one_name_from_several_loaders_are_added_together) {
    analysis_report before = report_builder{}.row(1, "app.Plugin", 3, 48).row(2, "app.Plugin", 2, 32);
    analysis_report after = report_builder{}.row(7, "app.Plugin", 4, 64);
    diff_report d = diff_analyses(before, after, 0);
    ASSERT_EQ(d.shrank.size(), 1u);
    EXPECT_EQ(d.shrank[0].instances_before, 5u);
    EXPECT_EQ(d.shrank[0].instances_delta, -1);
    EXPECT_EQ(d.shrank[0].shallow_delta, -16);
}

TEST(dump_diff, new_classes_grow_and_gone_classes_shrink) {
    analysis_report before = report_builder{}.row(1, "Kept", 1, 16).row(2, "Gone", 3, 48);
    analysis_report after = report_builder{}.row(5, "Kept", 1, 16).row(6, "Fresh", 2, 64);
    diff_report d = diff_analyses(before, after, 0);
    ASSERT_EQ(names(d.grew), std::vector<std::string>{"Fresh"});
    EXPECT_TRUE(d.grew[0].added);
    EXPECT_FALSE(d.grew[0].removed);
    EXPECT_EQ(d.grew[0].instances_delta, 2);
    ASSERT_EQ(names(d.shrank), std::vector<std::string>{"Gone"});
    EXPECT_TRUE(d.shrank[0].removed);
    EXPECT_FALSE(d.shrank[0].added);
    EXPECT_EQ(d.shrank[0].instances_after, 0u);
    EXPECT_EQ(d.shrank[0].shallow_delta, -48);
    EXPECT_EQ(d.unchanged_classes, 1u);
    EXPECT_EQ(d.grew_classes, 1u);
    EXPECT_EQ(d.shrank_classes, 1u);
}

TEST(dump_diff, growth_orders_by_shallow_bytes_then_instances_then_retained_then_name) {
    report_builder before, after;
    // Shallow growth: Big +1000, then four classes at +100 told apart by instances and retained.
    before.row(1, "Big", 10, 1000).row(2, "ManyMore", 1, 100).row(3, "FewMore", 1, 100);
    after.row(1, "Big", 20, 2000).row(2, "ManyMore", 11, 200).row(3, "FewMore", 2, 200);
    before.row(4, "HoldsMore", 1, 100).row(5, "B.Tie", 1, 100).row(6, "A.Tie", 1, 100);
    after.row(4, "HoldsMore", 2, 200).row(5, "B.Tie", 2, 200).row(6, "A.Tie", 2, 200);
    before.retained("HoldsMore", 100).retained("B.Tie", 100).retained("A.Tie", 100).retained("FewMore", 100);
    after.retained("HoldsMore", 5000).retained("B.Tie", 200).retained("A.Tie", 200).retained("FewMore", 200);
    // Only instances or only retained bytes changed: still growth, below every shallow gain.
    before.row(7, "OnlyCount", 1, 64).row(8, "OnlyRetained", 1, 64).retained("OnlyRetained", 64);
    after.row(7, "OnlyCount", 2, 64).row(8, "OnlyRetained", 1, 64).retained("OnlyRetained", 640);
    diff_report d = diff_analyses(before, after, 0);
    EXPECT_TRUE(d.retained);
    EXPECT_EQ(names(d.grew), (std::vector<std::string>{"Big", "ManyMore", "HoldsMore", "A.Tie", "B.Tie", "FewMore",
                                                       "OnlyCount", "OnlyRetained"}));
    EXPECT_EQ(find(d, "HoldsMore")->retained_delta, 4900);
    EXPECT_EQ(find(d, "OnlyRetained")->retained_delta, 576);
}

TEST(dump_diff, shrinking_classes_are_listed_apart_biggest_loss_first) {
    analysis_report before =
        report_builder{}.row(1, "LostLittle", 2, 200).row(2, "LostMuch", 9, 900).row(3, "Grew", 1, 10);
    analysis_report after =
        report_builder{}.row(1, "LostLittle", 1, 100).row(2, "LostMuch", 1, 100).row(3, "Grew", 2, 20);
    diff_report d = diff_analyses(before, after, 0);
    EXPECT_EQ(names(d.grew), std::vector<std::string>{"Grew"});
    EXPECT_EQ(names(d.shrank), (std::vector<std::string>{"LostMuch", "LostLittle"}));
    EXPECT_EQ(d.shrank[0].shallow_delta, -800);
    EXPECT_EQ(d.shrank[0].instances_delta, -8);
}

TEST(dump_diff, unchanged_classes_are_counted_not_listed) {
    analysis_report same = report_builder{}.row(1, "A", 1, 16).row(2, "B", 2, 32);
    diff_report d = diff_analyses(same, same, 0);
    EXPECT_TRUE(d.grew.empty());
    EXPECT_TRUE(d.shrank.empty());
    EXPECT_EQ(d.unchanged_classes, 2u);
}

TEST(dump_diff, totals_of_both_heaps_are_kept) {
    report_builder before, after;
    before.row(1, "A", 10, 160).reachable(9, 150).retained("A", 150);
    after.row(1, "A", 30, 480).reachable(28, 470).retained("A", 470);
    before.r.summary.object_arrays = 2;
    before.r.summary.primitive_arrays = 3;
    before.r.summary.classes = 4;
    before.r.summary.file = "a.hprof";
    before.r.summary.timestamp_ms = 1000;
    after.r.summary.classes = 5;
    after.r.summary.file = "b.hprof";
    after.r.summary.timestamp_ms = 61000;
    diff_report d = diff_analyses(before, after, 0);
    EXPECT_EQ(d.before.file, "a.hprof");
    EXPECT_EQ(d.after.file, "b.hprof");
    EXPECT_EQ(d.before.objects, 15u);
    EXPECT_EQ(d.after.objects, 30u);
    EXPECT_EQ(d.before.shallow_bytes, 160u);
    EXPECT_EQ(d.after.shallow_bytes, 480u);
    EXPECT_EQ(d.before.classes, 4u);
    EXPECT_EQ(d.after.classes, 5u);
    EXPECT_EQ(d.before.reachable_bytes, 150u);
    EXPECT_EQ(d.after.reachable_objects, 28u);
    EXPECT_EQ(d.before.timestamp_ms, 1000u);
    EXPECT_TRUE(d.notes.empty());
}

TEST(dump_diff, retained_sizes_are_compared_only_when_both_dumps_have_them) {
    report_builder before, after;
    before.row(1, "A", 1, 16);
    after.row(1, "A", 2, 32).retained("A", 32).reachable(2, 32);
    diff_report d = diff_analyses(before, after, 0);
    EXPECT_FALSE(d.retained);
    ASSERT_EQ(d.grew.size(), 1u);
    EXPECT_EQ(d.grew[0].retained_after, 0u);
    EXPECT_EQ(d.grew[0].retained_delta, 0);
    EXPECT_EQ(d.after.reachable_bytes, 0u);
    ASSERT_EQ(d.notes.size(), 1u);
    EXPECT_NE(d.notes[0].find("retained sizes"), std::string::npos);
}

TEST(dump_diff, notes_say_when_the_dumps_do_not_compare_well) {
    report_builder before, after;
    before.r.summary.layout = "64-bit, compressed oops";
    after.r.summary.layout = "64-bit, uncompressed oops";
    before.r.summary.timestamp_ms = 5000;
    after.r.summary.timestamp_ms = 4000;
    after.r.problems.push_back({"the dump is cut short", 1234, true});
    diff_report d = diff_analyses(before, after, 0);
    ASSERT_EQ(d.notes.size(), 3u);
    EXPECT_NE(d.notes[0].find("layouts differ"), std::string::npos) << d.notes[0];
    EXPECT_NE(d.notes[1].find("taken before"), std::string::npos) << d.notes[1];
    EXPECT_NE(d.notes[2].find("cut short"), std::string::npos) << d.notes[2];
}

TEST(dump_diff, top_cuts_each_list_but_counts_every_class) {
    report_builder before, after;
    for (int i = 0; i < 10; ++i) {
        before.row(i, "G" + std::to_string(i), 1, 100);
        after.row(i, "G" + std::to_string(i), 2, 200 + i);
        before.row(100 + i, "S" + std::to_string(i), 5, 500);
        after.row(100 + i, "S" + std::to_string(i), 1, 100 + i);
    }
    diff_report d = diff_analyses(before, after, 3);
    EXPECT_EQ(names(d.grew), (std::vector<std::string>{"G9", "G8", "G7"}));
    EXPECT_EQ(names(d.shrank), (std::vector<std::string>{"S0", "S1", "S2"}));
    EXPECT_EQ(d.grew_classes, 10u);
    EXPECT_EQ(d.shrank_classes, 10u);
    EXPECT_EQ(diff_analyses(before, after, 0).grew.size(), 10u);
}

TEST(dump_diff, extreme_sizes_neither_overflow_nor_misorder) {
    report_builder before, after;
    before.row(1, "FromNothing", 0, 0).row(2, "AlmostAll", 0, 0).row(3, "ToNothing", u64_max, u64_max);
    after.row(1, "FromNothing", u64_max, u64_max).row(2, "AlmostAll", u64_max - 1, u64_max - 1);
    after.row(3, "ToNothing", 0, 0);
    before.row(4, "HalfDown", 1ull << 63, 1ull << 63).row(5, "JustFits", i64_max, i64_max);
    after.row(4, "HalfDown", 0, 0).row(5, "JustFits", 0, 0);
    diff_report d = diff_analyses(before, after, 0);
    // The order uses the exact differences even where the reported deltas are held at the limits.
    ASSERT_EQ(names(d.grew), (std::vector<std::string>{"FromNothing", "AlmostAll"}));
    EXPECT_EQ(d.grew[0].shallow_delta, i64_max);
    EXPECT_EQ(d.grew[1].shallow_delta, i64_max);
    EXPECT_EQ(d.grew[0].instances_after, u64_max);
    ASSERT_EQ(names(d.shrank), (std::vector<std::string>{"ToNothing", "HalfDown", "JustFits"}));
    EXPECT_EQ(d.shrank[0].shallow_delta, i64_min);
    EXPECT_EQ(d.shrank[1].shallow_delta, i64_min);  // -2^63 fits exactly
    EXPECT_EQ(d.shrank[2].shallow_delta, -i64_max);
    EXPECT_EQ(d.shrank[2].instances_delta, -i64_max);
    // Rows of one name whose sum exceeds 64 bits stay at the maximum instead of wrapping.
    report_builder twice;
    twice.row(1, "Huge", u64_max, u64_max).row(2, "Huge", 5, 5);
    diff_report w = diff_analyses(report_builder{}, twice, 0);
    ASSERT_EQ(w.grew.size(), 1u);
    EXPECT_EQ(w.grew[0].instances_after, u64_max);
    // The text form prints the limits without wrapping into the other sign.
    std::string text = render_text(d, {0, 0});
    EXPECT_EQ(text.find("+-"), std::string::npos) << text;
    EXPECT_NE(text.find("-9,223,372,036,854,775,808"), std::string::npos) << text;
}

// Two dumps of one "JVM": the second has three more Points, another class id for Point, and one
// String fewer; an Object[] held by a JNI global holds the Points.
test::hprof_builder synthetic_dump(std::uint64_t point_class, int points, bool with_string) {
    using test::values;
    constexpr std::uint8_t t_object = 2, t_int = 10;
    test::hprof_builder b(8, "JAVA PROFILE 1.0.2", with_string ? 1700000000000 : 1700000060000);
    b.utf8(1, "java/lang/Object").utf8(2, "demo/Point").utf8(3, "[Ljava/lang/Object;").utf8(4, "java/lang/String");
    b.utf8(10, "x").utf8(11, "y").utf8(12, "value");
    b.load_class(1, 0x100, 0, 1).load_class(2, point_class, 0, 2).load_class(3, 0x102, 0, 3).load_class(4, 0x103, 0, 4);
    b.begin_segment();
    b.class_dump(0x100, 0, {});
    b.class_dump(point_class, 0x100, {{10, t_int}, {11, t_int}});
    b.class_dump(0x102, 0x100, {});
    b.class_dump(0x103, 0x100, {{12, t_object}});
    b.root_jni_global(0x5000, 0x1).root_sticky_class(0x100);
    std::vector<std::uint64_t> held;
    for (int i = 0; i < points; ++i) {
        b.instance(0x1000 + 0x10 * i, point_class, values(8).u4(i).u4(-i).bytes());
        held.push_back(0x1000 + 0x10 * i);
    }
    if (with_string) {
        b.instance(0x3000, 0x103, values(8).id(0).bytes());
        held.push_back(0x3000);
    }
    b.object_array(0x5000, 0x102, held);
    b.end_segment();
    b.heap_dump_end();
    return b;
}

TEST(dump_diff, two_synthetic_dumps_compare_class_by_class) {
    auto a = synthetic_dump(0x101, 2, true), b = synthetic_dump(0x201, 5, false);
    auto before = analyze_dump(a.span(), diff_analysis_options("a.hprof", true));
    auto after = analyze_dump(b.span(), diff_analysis_options("b.hprof", true));
    ASSERT_TRUE(before && after);
    diff_report d = diff_analyses(*before, *after, 0);
    EXPECT_TRUE(d.retained);
    EXPECT_TRUE(d.notes.empty()) << d.notes.front();
    ASSERT_FALSE(d.grew.empty());
    const class_diff_entry& p = d.grew[0];
    EXPECT_EQ(p.class_name, "demo.Point");
    EXPECT_EQ(p.instances_before, 2u);
    EXPECT_EQ(p.instances_delta, 3);
    EXPECT_EQ(p.shallow_delta, static_cast<std::int64_t>(p.shallow_after / 5 * 3));
    EXPECT_EQ(p.retained_delta, p.shallow_delta);  // a Point holds nothing else
    const class_diff_entry* arr = find(d, "java.lang.Object[]");
    ASSERT_NE(arr, nullptr);
    EXPECT_EQ(arr->instances_delta, 0);
    EXPECT_EQ(arr->retained_after, arr->shallow_after + p.shallow_after);  // it holds the Points
    const class_diff_entry* s = find(d, "java.lang.String");
    ASSERT_NE(s, nullptr);
    EXPECT_TRUE(s->removed);
    EXPECT_EQ(d.after.objects, d.before.objects + 2);
    EXPECT_GT(d.after.reachable_bytes, d.before.reachable_bytes);
    EXPECT_EQ(d.after.timestamp_ms - d.before.timestamp_ms, 60000u);
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

diff_report sample_diff() {
    report_builder before, after;
    before.row(1, "com.example.Leak", 1000, 32000).row(2, "byte[]", 10, 1000).row(3, "Old", 4, 64);
    after.row(1, "com.example.Leak", 3000, 96000).row(2, "byte[]", 10, 1000).row(4, "Fresh", 1, 24);
    before.retained("com.example.Leak", 32000).reachable(1014, 33064);
    after.retained("com.example.Leak", 96000).reachable(3011, 97024);
    before.r.summary.file = "before.hprof";
    after.r.summary.file = "after.hprof";
    before.r.summary.timestamp_ms = 1700000000000;
    after.r.summary.timestamp_ms = 1700000125000;
    return diff_analyses(before, after, 0);
}

TEST(dump_diff_text, the_headline_names_what_grew_most_with_its_growth) {
    std::string text = render_text(sample_diff(), {20, 0});
    auto lines = lines_of(text);
    ASSERT_FALSE(lines.empty());
    EXPECT_EQ(lines[0], "heapd diff: before.hprof -> after.hprof");
    EXPECT_NE(text.find("\nGrew most: com.example.Leak\n"
                        "  +2,000 instances (+200.0%), +62.5 KiB shallow (+200.0%), +62.5 KiB retained (+200.0%)\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("  Change   heap +62.5 KiB (+193.4%), +1,997 objects, reachable +62.5 KiB (+193.4%), "
                        "2m 05s apart\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("Fresh (new)"), std::string::npos) << text;
    EXPECT_NE(text.find("Old (gone)"), std::string::npos) << text;
    EXPECT_NE(text.find("+Retained"), std::string::npos);
    EXPECT_NE(text.find("  1 class unchanged"), std::string::npos) << text;
    EXPECT_LT(text.find("  com.example.Leak\n"), text.find("Fresh (new)"));  // the biggest growth first
    EXPECT_LT(text.find("Fresh (new)"), text.find("\nShrank"));
    for (const auto& l : lines) EXPECT_LT(l.size(), 100u) << l;
}

TEST(dump_diff_text, without_retained_sizes_or_growth_it_says_so) {
    analysis_report same = report_builder{}.row(1, "A", 1, 16);
    std::string text = render_text(diff_analyses(same, same, 0), {20, 0});
    EXPECT_NE(text.find("Nothing grew"), std::string::npos) << text;
    EXPECT_EQ(text.find("Retained"), std::string::npos) << text;
    EXPECT_EQ(text.find("reachable"), std::string::npos) << text;
    EXPECT_EQ(text.find("Grew ("), std::string::npos) << text;
}

TEST(dump_diff_json, the_json_has_the_documented_shape) {
    auto j = to_json(sample_diff());
    EXPECT_EQ(j.at("before").at("file"), "before.hprof");
    EXPECT_EQ(j.at("after").at("reachable_bytes"), 97024u);
    EXPECT_EQ(j.at("retained"), true);
    EXPECT_EQ(j.at("grew_classes"), 2u);
    EXPECT_EQ(j.at("shrank_classes"), 1u);
    EXPECT_EQ(j.at("unchanged_classes"), 1u);
    const auto& top = j.at("grew").at(0);
    EXPECT_EQ(top.at("class"), "com.example.Leak");
    EXPECT_EQ(top.at("status"), "changed");
    EXPECT_EQ(top.at("instances_delta"), 2000);
    EXPECT_EQ(top.at("shallow_bytes_before"), 32000u);
    EXPECT_EQ(top.at("retained_bytes_delta"), 64000);
    EXPECT_EQ(j.at("grew").at(1).at("status"), "new");
    EXPECT_EQ(j.at("shrank").at(0).at("status"), "gone");
    EXPECT_EQ(j.at("shrank").at(0).at("instances_delta"), -4);
    EXPECT_TRUE(j.at("notes").empty());
    analysis_report plain = report_builder{}.row(1, "A", 1, 16);
    auto k = to_json(diff_analyses(plain, report_builder{}, 0));
    EXPECT_FALSE(k.at("shrank").at(0).contains("retained_bytes_delta"));
    EXPECT_FALSE(k.at("after").contains("reachable_bytes"));
}

}  // namespace
}  // namespace heapd
