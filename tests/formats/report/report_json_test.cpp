// Tests of the report's JSON form: its shape, a lossless round trip, and refusal of incomplete input.
#include "formats/report/report_json.h"

#include <gtest/gtest.h>

#include <string>

namespace heapd {
namespace {

using json = nlohmann::ordered_json;

// A report with every field set, values past 32 bits, text beyond ASCII, and optional parts both
// present and absent.
analysis_report full_report() {
    analysis_report r;
    summary_report& s = r.summary;
    s.file = "/var/tmp/app-\xC3\xA9t\xC3\xA9.hprof";
    s.file_bytes = 6'000'000'000;
    s.format = "JAVA PROFILE 1.0.2";
    s.id_size = 8;
    s.timestamp_ms = 1700000000123;
    s.layout = "64-bit, compressed oops";
    s.layout_inferred = true;
    s.instances = 1234567;
    s.object_arrays = 2345;
    s.primitive_arrays = 34567;
    s.classes = 890;
    s.shallow_bytes = 123'456'789'012;
    s.records = {{"FRAME", 12}, {"HEAP_DUMP_END", 1}, {"HEAP_DUMP_SEGMENT", 3}, {"LOAD_CLASS", 890}, {"UTF8", 5000}};
    s.subrecords = {{"CLASS_DUMP", 890}, {"INSTANCE_DUMP", 1234567}, {"ROOT_JNI_GLOBAL", 17}};
    s.gc_roots = {{"jni_global", 17}, {"sticky_class", 400}, {"thread_object", 12}};
    r.histogram = {{0x7f0001000, "byte[]", 40000, 90'000'000'000},
                   {0, "int[]", 12, 4096},
                   {0x7f0002000, "java.util.HashMap$Node", 3000, 96000}};
    r.largest_objects = {{0xFFFF'FFFF'FFFF'FFF0, 0x7f0001000, "byte[]", 1'000'000'016, 1'000'000'000, true},
                         {0x1000, 0x7f0003000, "demo.Big", 4096, 0, false},
                         {0x2000, 0x7f0004000, "java.lang.Object[]", 16, 0, true}};
    r.threads = {{"main", "RUNNABLE", false, {"demo.Main.main(Main.java:10)"}},
                 {"W\xC3\xB6rker-\xE4\xB8\x96",
                  "TIMED_WAITING",
                  true,
                  {"java.lang.Thread.sleep(Native Method)", "demo.Worker.run(Worker.java:42)"}},
                 {"<thread 7>", "", std::nullopt, {}}};
    legacy_report& l = r.legacy;
    l.sites_total_live_bytes = 292864;
    l.sites_total_live_instances = 2926;
    l.alloc_sites = {{"char[]", 300000, 63496, 692, 63496, 692}, {"java.lang.String", 300001, 17216, 702, 20000, 800}};
    l.cpu_total_samples = 10;
    l.cpu_samples = {{7, "demo.Worker.run(Worker.java:42)"}, {3, "<trace 9>"}};
    l.heap_summary_live = std::pair<std::uint64_t, std::uint64_t>{4096, 12};
    l.heap_summary_allocated = std::pair<std::uint64_t, std::uint64_t>{8192, 20};
    l.control_flags = 3;
    l.control_stack_depth = 4;
    r.problems = {{"unknown top-level record tag 0x55 skipped (11 bytes)", 31, false},
                  {"file ends inside a HEAP_DUMP_SEGMENT record", 5'000'000'000, true}};
    return r;
}

void expect_same(const analysis_report& a, const analysis_report& b) {
    const summary_report &x = a.summary, &y = b.summary;
    EXPECT_EQ(x.file, y.file);
    EXPECT_EQ(x.file_bytes, y.file_bytes);
    EXPECT_EQ(x.format, y.format);
    EXPECT_EQ(x.id_size, y.id_size);
    EXPECT_EQ(x.timestamp_ms, y.timestamp_ms);
    EXPECT_EQ(x.layout, y.layout);
    EXPECT_EQ(x.layout_inferred, y.layout_inferred);
    EXPECT_EQ(x.instances, y.instances);
    EXPECT_EQ(x.object_arrays, y.object_arrays);
    EXPECT_EQ(x.primitive_arrays, y.primitive_arrays);
    EXPECT_EQ(x.classes, y.classes);
    EXPECT_EQ(x.shallow_bytes, y.shallow_bytes);
    EXPECT_EQ(x.records, y.records);
    EXPECT_EQ(x.subrecords, y.subrecords);
    EXPECT_EQ(x.gc_roots, y.gc_roots);
    ASSERT_EQ(a.histogram.size(), b.histogram.size());
    for (std::size_t i = 0; i < a.histogram.size(); ++i) {
        SCOPED_TRACE("histogram " + std::to_string(i));
        EXPECT_EQ(a.histogram[i].class_id, b.histogram[i].class_id);
        EXPECT_EQ(a.histogram[i].class_name, b.histogram[i].class_name);
        EXPECT_EQ(a.histogram[i].instances, b.histogram[i].instances);
        EXPECT_EQ(a.histogram[i].shallow_bytes, b.histogram[i].shallow_bytes);
    }
    ASSERT_EQ(a.largest_objects.size(), b.largest_objects.size());
    for (std::size_t i = 0; i < a.largest_objects.size(); ++i) {
        SCOPED_TRACE("largest " + std::to_string(i));
        const object_entry &o = a.largest_objects[i], &p = b.largest_objects[i];
        EXPECT_EQ(o.id, p.id);
        EXPECT_EQ(o.class_id, p.class_id);
        EXPECT_EQ(o.class_name, p.class_name);
        EXPECT_EQ(o.shallow_bytes, p.shallow_bytes);
        EXPECT_EQ(o.length, p.length);
        EXPECT_EQ(o.is_array, p.is_array);
    }
    ASSERT_EQ(a.threads.size(), b.threads.size());
    for (std::size_t i = 0; i < a.threads.size(); ++i) {
        SCOPED_TRACE("thread " + std::to_string(i));
        EXPECT_EQ(a.threads[i].name, b.threads[i].name);
        EXPECT_EQ(a.threads[i].state, b.threads[i].state);
        EXPECT_EQ(a.threads[i].daemon, b.threads[i].daemon);
        EXPECT_EQ(a.threads[i].frames, b.threads[i].frames);
    }
    const legacy_report &l = a.legacy, &m = b.legacy;
    EXPECT_EQ(l.sites_total_live_bytes, m.sites_total_live_bytes);
    EXPECT_EQ(l.sites_total_live_instances, m.sites_total_live_instances);
    ASSERT_EQ(l.alloc_sites.size(), m.alloc_sites.size());
    for (std::size_t i = 0; i < l.alloc_sites.size(); ++i) {
        SCOPED_TRACE("site " + std::to_string(i));
        EXPECT_EQ(l.alloc_sites[i].class_name, m.alloc_sites[i].class_name);
        EXPECT_EQ(l.alloc_sites[i].trace_serial, m.alloc_sites[i].trace_serial);
        EXPECT_EQ(l.alloc_sites[i].live_bytes, m.alloc_sites[i].live_bytes);
        EXPECT_EQ(l.alloc_sites[i].live_instances, m.alloc_sites[i].live_instances);
        EXPECT_EQ(l.alloc_sites[i].allocated_bytes, m.alloc_sites[i].allocated_bytes);
        EXPECT_EQ(l.alloc_sites[i].allocated_instances, m.alloc_sites[i].allocated_instances);
    }
    EXPECT_EQ(l.cpu_total_samples, m.cpu_total_samples);
    EXPECT_EQ(l.cpu_samples, m.cpu_samples);
    EXPECT_EQ(l.heap_summary_live, m.heap_summary_live);
    EXPECT_EQ(l.heap_summary_allocated, m.heap_summary_allocated);
    EXPECT_EQ(l.control_flags, m.control_flags);
    EXPECT_EQ(l.control_stack_depth, m.control_stack_depth);
    ASSERT_EQ(a.problems.size(), b.problems.size());
    for (std::size_t i = 0; i < a.problems.size(); ++i) {
        SCOPED_TRACE("problem " + std::to_string(i));
        EXPECT_EQ(a.problems[i].message, b.problems[i].message);
        EXPECT_EQ(a.problems[i].offset, b.problems[i].offset);
        EXPECT_EQ(a.problems[i].truncation, b.problems[i].truncation);
    }
}

TEST(report_json, a_full_report_survives_a_round_trip) {
    const analysis_report r = full_report();
    auto back = report_from_json(to_json(r));
    ASSERT_TRUE(back.has_value()) << back.error().describe();
    expect_same(r, *back);
}

TEST(report_json, a_full_report_survives_a_round_trip_through_text) {
    const analysis_report r = full_report();
    const std::string text = to_json(r).dump(2);
    auto back = report_from_json(json::parse(text));
    ASSERT_TRUE(back.has_value()) << back.error().describe();
    expect_same(r, *back);
}

TEST(report_json, retention_survives_a_round_trip) {
    analysis_report r = full_report();
    r.retention.computed = true;
    r.retention.reachable_objects = 10;
    r.retention.reachable_bytes = 4096;
    r.retention.unreachable_objects = 2;
    r.retention.unreachable_bytes = 48;
    r.retention.dominators = {{0x7f00, "class demo.Sessions", 96, 4000}, {0x7f80, "java.util.ArrayList", 24, 3900}};
    r.retention.retained_by_class = {{"java.util.ArrayList", 3900}, {"byte[]", 3000}};
    r.retention.suspect_threshold = 0.1;
    leak_suspect list;
    list.suspect = {0x7f80, "java.util.ArrayList", 24, 3900};
    list.instances = 1;
    list.retained_bytes = 3900;
    list.share = 3900.0 / 4096;
    list.accumulation = {0x7f90, "java.lang.Object[]", 56, 3870};
    list.chain_length = 1;
    list.accumulated = {{"demo.Sessions$Session", 10, 3800}};
    list.path.root_kinds = {"sticky_class"};
    list.path.length = 2;
    list.path.steps = {{0x7f00, "class demo.Sessions", true, "static LEAK", 1},
                       {0x7f80, "java.util.ArrayList", false, "elementData", 1},
                       {0x7f90, "java.lang.Object[]", false, "", 1}};
    leak_suspect blobs;
    blobs.is_class = true;
    blobs.suspect = {0x9000, "demo.Blob", 16, 40};
    blobs.instances = 12;
    blobs.retained_bytes = 480;
    blobs.share = 480.0 / 4096;
    blobs.accumulation = blobs.suspect;
    blobs.chain_length = 1;
    blobs.held_by = {{"<GC roots>", 12, 480}};
    blobs.path.root_kinds = {"jni_global"};
    blobs.path.steps = {{0x9000, "demo.Blob", false, "", 1}};
    r.retention.leak_suspects = {list, blobs};
    r.retention.tree_min_share = 0.001;
    r.retention.tree = {{0x7f00, "class demo.Sessions", 96, 4000, -1, 0},
                        {0x7f80, "java.util.ArrayList", 24, 3900, 0, 0},
                        {0, "", 10, 80, -1, 6'000'000'000},
                        {0, "", 4, 4, 1, 1}};
    const json j = to_json(r);
    EXPECT_EQ(j.at("dominator_tree").at("nodes").at(2),
              json({{"shallow_bytes", 10}, {"retained_bytes", 80}, {"parent", -1}, {"others", 6'000'000'000}}));
    EXPECT_EQ(j.at("leak_suspects").at("suspects").at(0).at("path").at("text"),
              "(sticky_class root) class demo.Sessions (static LEAK) \u2192 java.util.ArrayList.elementData "
              "\u2192 java.lang.Object[]");
    EXPECT_EQ(j.at("leak_suspects").at("suspects").at(1).at("kind"), "class");
    EXPECT_EQ(
        j.at("dominators").at(0),
        json({{"id", 0x7f00}, {"class", "class demo.Sessions"}, {"shallow_bytes", 96}, {"retained_bytes", 4000}}));
    EXPECT_EQ(j.at("reachability").at("unreachable_bytes"), 48);
    auto back = report_from_json(j);
    ASSERT_TRUE(back.has_value()) << back.error().message;
    EXPECT_EQ(to_json(*back), j);
    EXPECT_FALSE(to_json(full_report()).contains("dominators"));  // not computed: not claimed

    // A picture walks the nodes once: a parent after its child, or an others node as a parent, is refused.
    for (auto [node, parent] : {std::pair{1, 1}, std::pair{1, -2}, std::pair{3, 2}}) {
        json bad = j;
        bad["dominator_tree"]["nodes"][node]["parent"] = parent;
        auto refused = report_from_json(bad);
        ASSERT_FALSE(refused.has_value()) << node << " " << parent;
        EXPECT_NE(refused.error().message.find("dominator_tree node"), std::string::npos) << refused.error().message;
    }
}

// A waste report with a row of every kind, values past 32 bits and contents beyond ASCII.
waste_report full_waste() {
    waste_report w;
    w.computed = true;
    w.duplicate_string_groups = 3;
    w.duplicate_strings = 7'000'000'000;
    w.duplicate_string_saving = 55'944;
    w.duplicate_strings_top = {{"waste-dup-latin", 15, 1000, 55'944}, {"\xE2\x82\xAC \\n\\\"...", 70, 2, 150}};
    w.collections = {{"java.util.HashMap", 360, 2, 312, 36'000}, {"java.util.ArrayList", 9, 0, 0, 0}};
    w.collection_saving = 36'000;
    w.boxed = {{"java.lang.Long", 5'000'000'000, 120'000'000'000, 100, 119'999'997'600}};
    w.boxed_saving = 119'999'997'600;
    w.zero_arrays = {{"short[]", 700, 151'200}};
    w.zero_array_saving = 151'200;
    w.saving_bytes = 55'944 + 36'000 + 119'999'997'600 + 151'200;
    return w;
}

TEST(report_json, waste_survives_a_round_trip) {
    analysis_report r = full_report();
    r.waste = full_waste();
    const json j = to_json(r);
    const json& w = j.at("waste");
    EXPECT_EQ(w.at("saving_bytes"), r.waste.saving_bytes);
    EXPECT_EQ(
        w.at("duplicate_strings"),
        json({{"groups", 3},
              {"strings", 7'000'000'000u},
              {"saving_bytes", 55'944},
              {"top",
               {{{"content", "waste-dup-latin"}, {"length", 15}, {"copies", 1000}, {"saving_bytes", 55'944}},
                {{"content", "\xE2\x82\xAC \\n\\\"..."}, {"length", 70}, {"copies", 2}, {"saving_bytes", 150}}}}}));
    EXPECT_EQ(
        w.at("collections").at("classes").at(0),
        json(
            {{"class", "java.util.HashMap"}, {"count", 360}, {"empty", 2}, {"sparse", 312}, {"saving_bytes", 36'000}}));
    EXPECT_EQ(w.at("boxed").at("classes").at(0), json({{"class", "java.lang.Long"},
                                                       {"count", 5'000'000'000u},
                                                       {"bytes", 120'000'000'000u},
                                                       {"distinct_values", 100},
                                                       {"saving_bytes", 119'999'997'600u}}));
    EXPECT_EQ(w.at("zero_arrays"), json({{"saving_bytes", 151'200},
                                         {"types", {{{"class", "short[]"}, {"count", 700}, {"bytes", 151'200}}}}}));
    auto back = report_from_json(j);
    ASSERT_TRUE(back.has_value()) << back.error().describe();
    expect_same(r, *back);
    EXPECT_TRUE(back->waste.computed);
    EXPECT_EQ(to_json(*back), j);
    EXPECT_FALSE(to_json(full_report()).contains("waste"));  // not computed: not claimed
    EXPECT_FALSE(report_from_json(to_json(full_report()))->waste.computed);
    // Once present, every part of it is required.
    for (const char* path :
         {"/waste/saving_bytes", "/waste/duplicate_strings/top/1/copies", "/waste/collections/classes",
          "/waste/boxed/classes/0/distinct_values", "/waste/zero_arrays/saving_bytes"}) {
        SCOPED_TRACE(path);
        json broken = j;
        const json::json_pointer p(path);
        broken.at(p.parent_pointer()).erase(p.back());
        auto e = report_from_json(broken);
        ASSERT_FALSE(e.has_value());
        EXPECT_EQ(e.error().code, error_code::bad_value);
    }
}

TEST(report_json, an_empty_report_survives_a_round_trip) {
    analysis_report r;
    r.summary.format = "JAVA PROFILE 1.0.1";
    r.summary.id_size = 4;
    auto back = report_from_json(to_json(r));
    ASSERT_TRUE(back.has_value()) << back.error().describe();
    expect_same(r, *back);
    EXPECT_TRUE(back->legacy.empty());
}

TEST(report_json, the_off_heap_part_survives_a_round_trip) {
    analysis_report r;
    r.summary.format = "JAVA PROFILE 1.0.2";
    r.threads.push_back({"worker-1", "TIMED_WAITING", true, {"java.lang.Thread.sleep(Native Method)"}, 0x1234});
    off_heap_report& o = r.off_heap;
    o.computed = true;
    gc_path path{{"sticky_class"},
                 {{0x10, "class Leak", true, "static HELD", 1}, {0x20, "java.nio.DirectByteBuffer", false, "", 1}},
                 1};
    o.direct_buffers = {3, 3 << 20, 1, 1 << 20, 2,       4,        32,
                        5, 5 << 20, 8, 8 << 20, 8 << 20, 1u << 30, {{3, 3 << 20, path}}};
    o.threads.count = 1;
    o.threads.daemon = 1;
    o.threads.states = {{"TIMED_WAITING", 1}};
    o.threads.by_name = {{"worker-#", 1, "worker-1", {"java.lang.Thread.sleep(Native Method)"}}};
    o.threads.by_stack = {
        {"java.lang.Thread.sleep(Native Method)", 1, "worker-1", {"java.lang.Thread.sleep(Native Method)"}}};
    o.threads.holders = {{1, 0, path}};
    o.class_loaders = {31, 700, 660, 2, {{"java.net.URLClassLoader", 30, 30}}, 1, {{"Plugin", 30}}, {{30, 9000, path}}};
    const json j = to_json(r);
    EXPECT_EQ(j.at("threads").at(0).at("id"), 0x1234);
    EXPECT_EQ(j.at("off_heap").at("direct_buffers").at("jvm").at("max_bytes"), 1u << 30);
    auto back = report_from_json(j);
    ASSERT_TRUE(back.has_value()) << back.error().describe();
    EXPECT_EQ(back->threads.at(0).id, 0x1234u);
    EXPECT_EQ(to_json(*back), j);
    // Without the object graph only the thread groups are there.
    o.computed = false;
    const json threads_only = to_json(r).at("off_heap");
    EXPECT_FALSE(threads_only.contains("direct_buffers"));
    EXPECT_FALSE(threads_only.contains("class_loaders"));
    EXPECT_EQ(threads_only.at("threads").at("by_name").at(0).at("key"), "worker-#");
}

TEST(report_json, the_json_has_the_documented_shape) {
    const json j = to_json(full_report());
    for (const char* key : {"summary", "histogram", "largest_objects", "threads", "legacy", "off_heap", "problems"})
        EXPECT_TRUE(j.contains(key)) << key;
    EXPECT_EQ(j.size(), 7u);
    const json& s = j.at("summary");
    EXPECT_EQ(s.at("format"), "JAVA PROFILE 1.0.2");
    EXPECT_EQ(s.at("id_size"), 8);
    EXPECT_EQ(s.at("instances"), 1234567);
    EXPECT_EQ(s.at("classes"), 890);
    EXPECT_EQ(s.at("shallow_bytes"), 123'456'789'012u);
    EXPECT_EQ(s.at("gc_roots"), json({{"jni_global", 17}, {"sticky_class", 400}, {"thread_object", 12}}));
    EXPECT_EQ(s.at("records").at("UTF8"), 5000);
    EXPECT_EQ(s.at("layout_inferred"), true);
    EXPECT_EQ(j.at("histogram").at(2), json({{"class", "java.util.HashMap$Node"},
                                             {"class_id", 0x7f0002000},
                                             {"instances", 3000},
                                             {"shallow_bytes", 96000}}));
    const json& largest = j.at("largest_objects");
    EXPECT_EQ(largest.at(0).at("id"), 0xFFFF'FFFF'FFFF'FFF0u);
    EXPECT_EQ(largest.at(0).at("class"), "byte[]");
    EXPECT_EQ(largest.at(0).at("shallow_bytes"), 1'000'000'016u);
    EXPECT_EQ(largest.at(0).at("length"), 1'000'000'000u);
    EXPECT_FALSE(largest.at(1).contains("length"));  // not an array
    EXPECT_EQ(largest.at(2).at("length"), 0);
    const json& threads = j.at("threads");
    EXPECT_EQ(threads.at(1),
              json({{"name", "W\xC3\xB6rker-\xE4\xB8\x96"},
                    {"state", "TIMED_WAITING"},
                    {"daemon", true},
                    {"frames", {"java.lang.Thread.sleep(Native Method)", "demo.Worker.run(Worker.java:42)"}}}));
    EXPECT_EQ(threads.at(2), json({{"name", "<thread 7>"}, {"frames", json::array()}}));
    const json& legacy = j.at("legacy");
    EXPECT_EQ(legacy.at("alloc_sites").at("sites").size(), 2u);
    EXPECT_EQ(legacy.at("alloc_sites").at("total_live_bytes"), 292864);
    EXPECT_EQ(legacy.at("cpu_samples").at("traces").at(1), json({{"samples", 3}, {"top_frame", "<trace 9>"}}));
    EXPECT_EQ(
        legacy.at("heap_summary"),
        json({{"live_bytes", 4096}, {"live_instances", 12}, {"allocated_bytes", 8192}, {"allocated_instances", 20}}));
    EXPECT_EQ(legacy.at("control_settings"), json({{"flags", 3}, {"stack_depth", 4}}));
    EXPECT_EQ(j.at("problems").at(1), json({{"message", "file ends inside a HEAP_DUMP_SEGMENT record"},
                                            {"offset", 5'000'000'000u},
                                            {"truncation", true}}));
    EXPECT_EQ(to_json(analysis_report{}).at("legacy"), json::object());
}

TEST(report_json, a_missing_required_key_is_a_bad_value) {
    const json full = to_json(full_report());
    const char* required[] = {"/summary",
                              "/summary/format",
                              "/summary/id_size",
                              "/summary/instances",
                              "/summary/classes",
                              "/summary/shallow_bytes",
                              "/summary/gc_roots",
                              "/histogram",
                              "/histogram/0/class",
                              "/histogram/0/instances",
                              "/histogram/0/shallow_bytes",
                              "/largest_objects",
                              "/largest_objects/1/id",
                              "/largest_objects/1/class",
                              "/largest_objects/1/shallow_bytes",
                              "/threads",
                              "/threads/2/name",
                              "/threads/0/frames",
                              "/legacy/alloc_sites/sites/1/live_bytes",
                              "/legacy/cpu_samples/total",
                              "/legacy/heap_summary/allocated_bytes",
                              "/legacy/control_settings/stack_depth",
                              "/problems/0/message",
                              "/problems/1/offset"};
    for (const char* path : required) {
        SCOPED_TRACE(path);
        json j = full;
        const json::json_pointer p(path);
        j.at(p.parent_pointer()).erase(p.back());
        ASSERT_FALSE(j.contains(p));
        auto r = report_from_json(j);
        ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error().code, error_code::bad_value);
        EXPECT_TRUE(r.error().message.starts_with("report JSON: ")) << r.error().message;
    }
}

TEST(report_json, a_value_of_the_wrong_type_is_a_bad_value) {
    const json full = to_json(full_report());
    const std::pair<const char*, json> cases[] = {
        {"/summary/instances", "many"},
        {"/summary/format", 12},
        {"/summary/gc_roots", json::array({1, 2})},
        {"/summary/gc_roots/jni_global", "17"},
        {"/summary/file", 3},
        {"/histogram", 5},
        {"/histogram/0", "row"},
        {"/threads/0/frames", "main"},
        {"/threads/0/daemon", "yes"},
        {"/largest_objects/0/id", "0x10"},
        {"/problems/0/truncation", 1},
        {"/legacy/alloc_sites/sites", json::object({{"x", 1}})},
        {"/summary", json::array()},
    };
    for (const auto& [path, value] : cases) {
        SCOPED_TRACE(path);
        json j = full;
        j[json::json_pointer(path)] = value;
        auto r = report_from_json(j);
        ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error().code, error_code::bad_value);
    }
}

TEST(report_json, documents_that_are_not_objects_are_bad_values) {
    for (const json& j :
         {json(nullptr), json(42), json("report"), json::array(), json::object(), json::array({json::object()})}) {
        SCOPED_TRACE(j.dump());
        auto r = report_from_json(j);
        ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error().code, error_code::bad_value);
    }
}

TEST(report_json, optional_keys_take_their_defaults) {
    const json j = json::parse(R"({
        "summary": {"format": "JAVA PROFILE 1.0.2", "id_size": 8, "instances": 3, "classes": 2,
                    "shallow_bytes": 72, "gc_roots": {"sticky_class": 2}},
        "histogram": [{"class": "demo.Point", "instances": 3, "shallow_bytes": 72}],
        "largest_objects": [{"id": 16, "class": "demo.Point", "shallow_bytes": 24}],
        "threads": [{"name": "main", "frames": []}]
    })");
    auto r = report_from_json(j);
    ASSERT_TRUE(r.has_value()) << r.error().describe();
    EXPECT_EQ(r->summary.file, "");
    EXPECT_EQ(r->summary.file_bytes, 0u);
    EXPECT_EQ(r->summary.timestamp_ms, 0u);
    EXPECT_EQ(r->summary.layout, "");
    EXPECT_FALSE(r->summary.layout_inferred);
    EXPECT_EQ(r->summary.instances, 3u);
    EXPECT_EQ(r->summary.object_arrays, 0u);
    EXPECT_TRUE(r->summary.records.empty());
    EXPECT_TRUE(r->summary.subrecords.empty());
    EXPECT_EQ(r->summary.gc_roots, (std::vector<std::pair<std::string, std::uint64_t>>{{"sticky_class", 2}}));
    ASSERT_EQ(r->histogram.size(), 1u);
    EXPECT_EQ(r->histogram[0].class_id, 0u);
    ASSERT_EQ(r->largest_objects.size(), 1u);
    EXPECT_EQ(r->largest_objects[0].id, 16u);
    EXPECT_EQ(r->largest_objects[0].class_id, 0u);
    EXPECT_FALSE(r->largest_objects[0].is_array);
    EXPECT_EQ(r->largest_objects[0].length, 0u);
    ASSERT_EQ(r->threads.size(), 1u);
    EXPECT_EQ(r->threads[0].state, "");
    EXPECT_EQ(r->threads[0].daemon, std::nullopt);
    EXPECT_TRUE(r->legacy.empty());
    EXPECT_TRUE(r->problems.empty());
}

TEST(report_json, the_order_of_summary_counts_survives_a_round_trip) {
    analysis_report r = full_report();
    r.summary.records = {{"UTF8", 5000}, {"LOAD_CLASS", 890}, {"FRAME", 12}, {"HEAP_DUMP_SEGMENT", 3}};
    r.summary.subrecords = {{"ROOT_JNI_GLOBAL", 17}, {"CLASS_DUMP", 890}};
    r.summary.gc_roots = {{"sticky_class", 400}, {"jni_global", 17}};
    auto back = report_from_json(to_json(r));
    ASSERT_TRUE(back.has_value()) << back.error().describe();
    EXPECT_EQ(back->summary.records, r.summary.records);
    EXPECT_EQ(back->summary.subrecords, r.summary.subrecords);
    EXPECT_EQ(back->summary.gc_roots, r.summary.gc_roots);
}

}  // namespace
}  // namespace heapd
