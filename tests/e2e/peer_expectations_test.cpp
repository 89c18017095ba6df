// Other projects' test dumps (../shared/testdata/peer, see its README) analysed by `heapd analyze
// --json` and `heapd path --json`, each assertion one of those projects' own expectations of the file
// or heapd's documented difference from it (docs/analyze.md, "Checked against dumps other programs
// wrote"). The files are read in place, never changed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "formats/hprof/class_table.h"
#include "formats/hprof/mapped_file.h"
#include "formats/hprof/record_index.h"
#include "support/jvm_process.h"

namespace heapd::test {
namespace {

std::string peer_file(const std::string& name) {
    const std::string path = std::string(HEAPD_PEER_DATA) + "/" + name;
    EXPECT_EQ(::access(path.c_str(), R_OK), 0) << path
                                               << " is missing: these tests need ../shared/testdata/peer beside the "
                                                  "clone (see README.md)";
    return path;
}

// `heapd analyze --json --top 0` of a peer dump (no index written beside it: the files are not ours).
nlohmann::json analyze(const std::string& name, const std::vector<std::string>& extra = {}) {
    scratch_dir dir;
    std::vector<std::string> argv = {heapd_binary(), "analyze",       "--json",  "--top", "0",
                                     "--no-index",   "--inflate-dir", dir.path()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back(peer_file(name));
    const command_result r = run_command(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

// `heapd path --json` to one object of a peer dump.
nlohmann::json path_to(const std::string& name, std::uint64_t id, unsigned roots = 1) {
    const command_result r = run_command(
        {heapd_binary(), "path", "--json", "--roots", std::to_string(roots), peer_file(name), std::to_string(id)});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

const nlohmann::json& row(const nlohmann::json& report, const std::string& class_name) {
    static const nlohmann::json none = {{"instances", 0}, {"shallow_bytes", 0}, {"reachable_instances", 0}};
    for (const auto& e : report.at("histogram"))
        if (e.at("class") == class_name) return e;
    return none;
}

std::uint64_t total_objects(const nlohmann::json& report) {
    const auto& s = report.at("summary");
    return s.at("instances").get<std::uint64_t>() + s.at("object_arrays").get<std::uint64_t>() +
           s.at("primitive_arrays").get<std::uint64_t>() + s.at("classes").get<std::uint64_t>();
}

std::uint64_t frames(const nlohmann::json& report) {
    std::uint64_t n = 0;
    for (const auto& t : report.at("threads")) n += t.at("frames").size();
    return n;
}

// A jmap -histo file as MAT keeps it ("count bytes name" or "rank: count bytes name"), VM-internal
// <...> rows left out, names in source form.
std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> jmap_histogram(const std::string& path) {
    static const std::regex line(R"(^\s*(?:\d+:)?\s*(\d+)\s+(\d+)\s+(\S+)\s*$)");
    static const std::map<char, std::string> prim = {{'Z', "boolean"}, {'C', "char"},  {'F', "float"}, {'D', "double"},
                                                     {'B', "byte"},    {'S', "short"}, {'I', "int"},   {'J', "long"}};
    std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> out;
    std::ifstream in(path);
    EXPECT_TRUE(in) << path;
    for (std::string text; std::getline(in, text);) {
        std::smatch m;
        if (!std::regex_match(text, m, line) || m[3].str().starts_with("<")) continue;
        std::string name = m[3];
        std::size_t dims = 0;
        while (dims < name.size() && name[dims] == '[') ++dims;
        if (dims > 0) {
            const std::string elem = name.substr(dims);
            name = elem.size() == 1 ? prim.at(elem[0]) : elem.substr(1, elem.size() - 2);
            for (std::size_t i = 0; i < dims; ++i) name += "[]";
        }
        out[name] = {std::stoull(m[1]), std::stoull(m[2])};
    }
    return out;
}

// MAT's TestInstanceSizes: every non-array class of the JVM's own histogram that the dump holds has
// the JVM's size per instance; array totals agree where the counts do; MAT allows `allowed` misses.
struct instance_size_case {
    std::string dump, histogram;
    unsigned allowed;
};

class peer_mat_instance_sizes : public ::testing::TestWithParam<instance_size_case> {};

TEST_P(peer_mat_instance_sizes, equal_the_jvms_histogram_within_mats_allowance) {
    const auto& c = GetParam();
    const nlohmann::json report = analyze("eclipse-mat/" + c.dump);
    unsigned compared = 0;
    std::vector<std::string> misses;
    for (const auto& [name, jvm] : jmap_histogram(peer_file("eclipse-mat/" + c.histogram))) {
        const auto& mine = row(report, name);
        const std::uint64_t count = mine.at("instances"), bytes = mine.at("shallow_bytes");
        if (count == 0) continue;  // the histogram was taken apart from the dump: classes come and go
        const bool array = name.ends_with("[]");
        if (array && count != jvm.first) continue;
        ++compared;
        const bool same = array ? bytes == jvm.second : bytes / count == jvm.second / jvm.first;
        if (!same)
            misses.push_back(name + ": JVM " + std::to_string(jvm.first) + "/" + std::to_string(jvm.second) +
                             " B, heapd " + std::to_string(count) + "/" + std::to_string(bytes) + " B");
    }
    EXPECT_GE(compared, 100u);
    EXPECT_LE(misses.size(), c.allowed) << ::testing::PrintToString(misses);
}

INSTANTIATE_TEST_SUITE_P(
    peer, peer_mat_instance_sizes,
    ::testing::Values(instance_size_case{"sun_jdk5_13_x32.hprof", "histogram_sun_jdk5_13_x32.txt", 1},
                      instance_size_case{"sun_jdk6_18_x32.hprof", "histogram_sun_jdk6_18_x32.txt", 0},
                      instance_size_case{"sun_jdk6_30_x64_nocompressedOops.hprof",
                                         "sun_jdk6_30_x64_nocompressedOops.notes.txt", 0}),
    [](const auto& info) { return info.param.dump.substr(0, info.param.dump.find('.')); });

// Every MAT dump: the histogram's counts add up to the objects, its bytes to the heap, and every
// object is reachable or not (MAT keeps unreachable objects where asked; heapd always counts them).
class peer_mat_dump : public ::testing::TestWithParam<std::string> {};

TEST_P(peer_mat_dump, counts_and_shallow_sums_are_consistent) {
    const nlohmann::json report = analyze("eclipse-mat/" + GetParam());
    std::uint64_t count = 0, bytes = 0, reachable = 0;
    for (const auto& e : report.at("histogram")) {
        count += e.at("instances").get<std::uint64_t>();
        bytes += e.at("shallow_bytes").get<std::uint64_t>();
        reachable += e.at("reachable_instances").get<std::uint64_t>();
    }
    EXPECT_GT(count, 1000u);
    EXPECT_EQ(count, total_objects(report));
    EXPECT_EQ(bytes, report.at("summary").at("shallow_bytes").get<std::uint64_t>());
    const auto& r = report.at("reachability");
    EXPECT_EQ(r.at("reachable_objects").get<std::uint64_t>() + r.at("unreachable_objects").get<std::uint64_t>(), count);
    EXPECT_EQ(reachable, r.at("reachable_objects").get<std::uint64_t>());
    EXPECT_EQ(report.at("problems").size(), 0u);
}

INSTANTIATE_TEST_SUITE_P(peer, peer_mat_dump,
                         ::testing::Values("sun_jdk5_13_x32.hprof", "sun_jdk5_64bit.hprof", "sun_jdk6_18_x32.hprof",
                                           "sun_jdk6_30_x64_nocompressedOops.hprof", "sun_jdk6_32bit.hprof",
                                           "oracle_jdk7_21_x64.hprof", "oracle_jdk8_05_x64.hprof",
                                           "openjdk_jdk11_04_x64.hprof.gz"),
                         [](const auto& info) { return info.param.substr(0, info.param.find('.')); });

TEST(peer_mat, stack_frames_with_local_objects_where_mat_expects_them) {
    for (const char* dump : {"sun_jdk6_18_x32.hprof", "oracle_jdk7_21_x64.hprof", "oracle_jdk8_05_x64.hprof"}) {
        SCOPED_TRACE(dump);
        const nlohmann::json report = analyze(std::string("eclipse-mat/") + dump);
        EXPECT_GT(frames(report), 0u);
        EXPECT_GT(report.at("summary").at("gc_roots").value("java_frame", 0), 0);
    }
    for (const char* dump : {"sun_jdk5_13_x32.hprof", "sun_jdk5_64bit.hprof", "sun_jdk6_32bit.hprof"}) {
        SCOPED_TRACE(dump);
        EXPECT_EQ(frames(analyze(std::string("eclipse-mat/") + dump)), 0u);
    }
}

// MAT's OQLTest counts what is reachable (MAT discards the rest). MAT follows every reference, a
// Reference's referent too; heapd only strong ones: one String of this dump is held only through
// a weak reference, so heapd's live Strings are MAT's 492 less one.
TEST(peer_mat, oql_counts_of_what_is_reachable) {
    const nlohmann::json report = analyze("eclipse-mat/sun_jdk5_64bit.hprof");
    EXPECT_EQ(row(report, "java.lang.String[]").at("reachable_instances"), 28);
    EXPECT_EQ(row(report, "java.lang.String").at("reachable_instances"), 492 - 1);
    EXPECT_GT(row(report, "java.lang.String").at("instances"), 492);  // the unreachable ones are counted apart
}

// The old hprof agent wrote two heap dumps into this file, with the same ids: each is analysed on its
// own (the last by default, --dump 1 the first), never merged. The JVM's histogram (taken apart from
// the dumps) says 750 Strings; each dump holds about as many, together twice.
TEST(peer_mat, two_dumps_in_one_file_are_analysed_apart) {
    const std::string file = "eclipse-mat/sun_jdk6_31_hprofagent_nocompressedOops.hprof";
    const nlohmann::json last = analyze(file), first = analyze(file, {"--dump", "1"});
    EXPECT_EQ(last.at("summary").at("heap_dumps"), 2);
    EXPECT_EQ(last.at("summary").at("dump_number"), 2);
    EXPECT_EQ(first.at("summary").at("dump_number"), 1);
    const auto strings = [](const nlohmann::json& r) { return row(r, "java.lang.String").at("instances").get<int>(); };
    const auto jvm = jmap_histogram(peer_file("eclipse-mat/sun_jdk6_31_hprofagent_nocompressedOops.txt"));
    ASSERT_EQ(jvm.at("java.lang.String").first, 750u);
    EXPECT_NEAR(strings(first), 750, 15);
    EXPECT_NEAR(strings(last), 750, 15);
    EXPECT_NE(first.at("summary").at("instances"), last.at("summary").at("instances"));
    // The agent's 4-byte ids on a 64-bit JVM are not addresses: heapd can only assume 32-bit sizes
    // (String 24 B where the JVM says 40 B), and says it assumed them.
    EXPECT_EQ(last.at("summary").at("layout_inferred"), false);
}

// perflib's HprofParserTest and DominatorsTest on dialer.android-hprof.
TEST(peer_perflib, counts_array_lengths_and_reachable_objects) {
    const std::string file = "android/dialer.android-hprof";
    const nlohmann::json report = analyze(file);
    EXPECT_EQ(total_objects(report), 43687u);  // instances + classes
    EXPECT_EQ(row(report, "byte[]").at("instances"), 1406);
    // perflib counts 681,489 bytes of byte[] elements; heapd's shallow sizes add a 12-byte header and
    // at most 7 bytes of alignment to each array.
    const std::uint64_t byte_arrays = row(report, "byte[]").at("shallow_bytes");
    EXPECT_GE(byte_arrays, 681489u + 1406u * 12);
    EXPECT_LE(byte_arrays, 681489u + 1406u * 19);
    EXPECT_EQ(row(report, "int[][]").at("instances"), 37);
    EXPECT_EQ(row(report, "java.lang.String[]").at("instances"), 1396);
    EXPECT_EQ(path_to(file, 0xB0D60401).at("length"), 43224);
    EXPECT_EQ(path_to(file, 0xB0F69F58).at("length"), 10);
    // perflib reads ROOT_THREAD_OBJECT records as thread descriptions, not as GC roots: the 29
    // objects only the 11 Thread roots hold are reachable to heapd, not to perflib.
    EXPECT_EQ(report.at("reachability").at("reachable_objects"), 42839 + 29);
}

// DominatorsTest: the dump's HEAP DUMP INFO records name two heaps, zygote and app, between them
// every object; each class's instances are counted per heap.
TEST(peer_perflib, the_zygote_and_app_heaps) {
    const nlohmann::json report = analyze("android/dialer.android-hprof");
    const auto& heaps = report.at("summary").at("heaps");
    ASSERT_EQ(heaps.size(), 2u);
    EXPECT_EQ(heaps[0].at("name"), "zygote");
    EXPECT_EQ(heaps[1].at("name"), "app");
    EXPECT_EQ(heaps[0].at("objects").get<std::uint64_t>() + heaps[1].at("objects").get<std::uint64_t>(), 43687u);
    EXPECT_GT(heaps[1].at("objects"), 0);
    for (const auto& e : report.at("histogram")) {
        std::uint64_t per_heap = 0;
        for (const auto& [heap, n] : e.at("heaps").items()) per_heap += n.get<std::uint64_t>();
        EXPECT_EQ(per_heap, e.at("instances").get<std::uint64_t>()) << e.at("class");
    }
}

// The report speaks of the app, as Android Studio's profiler does: the zygote's preloads (every
// class object held by its sticky root, Resources' sPreloadedDrawables...) are given, not suspects;
// --heap all brings them back.
TEST(peer_perflib, suspects_are_the_apps_unless_every_heap_is_asked_for) {
    const std::string file = "android/dialer.android-hprof";
    auto classes_suspect = [](const nlohmann::json& report) -> std::uint64_t {
        for (const auto& s : report.at("leak_suspects").at("suspects"))
            if (s.at("kind") == "class" && s.at("class") == "java.lang.Class") return s.at("instances");
        return 0;
    };
    const nlohmann::json app = analyze(file), all = analyze(file, {"--heap", "all"});
    EXPECT_EQ(app.at("summary").at("heap_focus"), "app");
    EXPECT_EQ(classes_suspect(all), 3571u);
    EXPECT_LT(classes_suspect(app), 100u);  // the app's own classes at most
    for (const auto& d : app.at("dominators")) EXPECT_NE(d.at("class"), "class android.content.res.Resources");
    // The HTML page shows the split too.
    scratch_dir dir;
    const command_result html =
        run_command({heapd_binary(), "analyze", "--no-index", "--html", dir.file("report.html"), peer_file(file)});
    ASSERT_EQ(html.exit_code, 0) << html.err;
    std::ifstream page(dir.file("report.html"));
    const std::string text((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("<dt>Heaps</dt><dd>zygote "), std::string::npos);
    EXPECT_NE(text.find("are the app heap&#39;s"), std::string::npos);
}

// The classes themselves, read with heapd's reader: $VALUES of Thread$State, and DialerApplication's
// loader and superclasses.
TEST(peer_perflib, enum_values_class_loader_and_superclasses) {
    auto file = mapped_file::open(peer_file("android/dialer.android-hprof"));
    ASSERT_TRUE(file.has_value()) << file.error().describe();
    auto reader = hprof_reader::parse(file->bytes());
    ASSERT_TRUE(reader.has_value());
    const record_index idx = record_index::build(*reader);
    class_table classes(idx);
    add_class_dumps(idx, classes);

    const class_info* state = classes.find_by_name("java.lang.Thread$State");
    ASSERT_NE(state, nullptr);
    std::uint64_t values = 0;
    state->dump.for_each_static([&](const class_dump_view::static_field& s) {
        if (s.type == 2 && idx.utf8(s.name_id) == "$VALUES") values = be::id(s.value.data(), idx.id_size());
    });
    ASSERT_NE(values, 0u);
    EXPECT_EQ(path_to("android/dialer.android-hprof", values).at("length"), 6);

    const class_info* app = classes.find_by_name("com.android.dialer.DialerApplication");
    ASSERT_NE(app, nullptr);
    const nlohmann::json loader = path_to("android/dialer.android-hprof", app->dump.loader_id());
    EXPECT_EQ(loader.at("class"), "dalvik.system.PathClassLoader");
    std::vector<std::string> chain;
    for (const class_info* c = classes.find(app->super_id()); c != nullptr && chain.size() < 10;
         c = classes.find(c->super_id()))
        chain.push_back(classes.java_name(c->id()));
    EXPECT_EQ(chain, (std::vector<std::string>{"android.app.Application", "android.content.ContextWrapper",
                                               "android.content.Context", "java.lang.Object"}));
}

// ahat's InstanceTest: a java.lang.String whose value is null is read without failing.
TEST(peer_ahat, a_string_with_a_null_value_is_read) {
    const nlohmann::json report = analyze("android/ahat-RI.hprof");
    EXPECT_EQ(report.at("problems").size(), 0u);
    EXPECT_GT(row(report, "java.lang.String").at("instances"), 0);
    EXPECT_EQ(path_to("android/ahat-RI.hprof", 0x500001a8).at("class"), "java.lang.String");
}

// LeakCanary's ServiceBinderLeakTest: the leaked LeakyService is held through the field `service` of
// its Binder, LeakyService$MyBinder, which a native (JNI global) root holds; no other chain of strong
// references reaches it, so with Binder-held roots excluded it is no leak.
TEST(peer_leakcanary, the_leaked_service_is_held_only_by_its_binder) {
    const nlohmann::json p = path_to("android/leak_service_binder_ignored.hprof", 0xb0f84720, 10);
    EXPECT_EQ(p.at("class"), "com.example.leakcanary.LeakyService");
    ASSERT_EQ(p.at("paths").size(), 1u);  // one root, though ten were asked for
    const auto& path = p.at("paths")[0];
    EXPECT_EQ(path.at("root_kinds"), nlohmann::json::array({"jni_global"}));
    ASSERT_EQ(path.at("steps").size(), 2u);
    EXPECT_EQ(path.at("steps")[0].at("class"), "com.example.leakcanary.LeakyService$MyBinder");
    EXPECT_EQ(path.at("steps")[0].at("field"), "service");
}

// Android's Bitmaps (API 19: pixels in a byte[] the Bitmap holds): each one's pixel bytes are its
// buffer's length, 4 bytes a pixel for these ARGB_8888 bitmaps; the largest is the 96×96 image the
// leaked Toast shows.
TEST(peer_android, bitmaps_and_their_pixels) {
    const std::string file = "android/leak_service_binder_ignored.hprof";
    const nlohmann::json report = analyze(file);
    const auto& b = report.at("off_heap").at("bitmaps");
    EXPECT_EQ(b.at("heap").get<std::uint64_t>() + b.at("recycled").get<std::uint64_t>() +
                  b.at("unreachable").get<std::uint64_t>(),
              row(report, "android.graphics.Bitmap").at("instances").get<std::uint64_t>());
    ASSERT_FALSE(b.at("largest").empty());
    const auto& big = b.at("largest")[0];
    EXPECT_EQ(big.at("width"), 96);
    EXPECT_EQ(big.at("height"), 96);
    EXPECT_EQ(big.at("pixel_bytes"), 96 * 96 * 4);
    EXPECT_EQ(big.at("in_heap"), true);
    EXPECT_EQ(path_to(file, 0xb0fa9208).at("length"), 96 * 96 * 4);  // its mBuffer
}

// LeakCanary finds the leaked service through its KeyedWeakReference, whose key the test names; so
// does heapd, first in the report, with the path and its answer to the Binder question.
TEST(peer_leakcanary, the_watched_service_is_reported_first_as_held_only_by_a_binder) {
    const nlohmann::json report = analyze("android/leak_service_binder_ignored.hprof");
    ASSERT_EQ(report.at("watched_objects").size(), 1u);
    const auto& w = report.at("watched_objects")[0];
    EXPECT_EQ(w.at("key"), "6e524414-9581-4ce7-8690-e8ddf8b82454");
    EXPECT_EQ(w.at("object").at("id"), 0xb0f84720u);
    EXPECT_EQ(w.at("object").at("class"), "com.example.leakcanary.LeakyService");
    EXPECT_EQ(w.at("reachable"), true);
    EXPECT_EQ(w.at("path").at("steps")[0].at("class"), "com.example.leakcanary.LeakyService$MyBinder");
    EXPECT_EQ(w.at("only_binder_held"), true);
    // The text and HTML reports put it before the suspects.
    scratch_dir dir;
    const command_result text = run_command({heapd_binary(), "analyze", "--no-index", "--html", dir.file("r.html"),
                                             peer_file("android/leak_service_binder_ignored.hprof")});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    const auto watched_at = text.out.find("Watched by LeakCanary and still in the heap");
    ASSERT_NE(watched_at, std::string::npos);
    EXPECT_LT(watched_at, text.out.find("Leak suspects"));
    EXPECT_NE(text.out.find("LeakCanary counts no leak once such roots are excluded"), std::string::npos);
    std::ifstream page(dir.file("r.html"));
    const std::string html((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
    EXPECT_LT(html.find("<section id=\"watched\">"), html.find("<section id=\"suspects\">"));
}

}  // namespace
}  // namespace heapd::test
