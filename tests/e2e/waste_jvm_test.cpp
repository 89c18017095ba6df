// The waste report of a real JVM: tests/java/Waste.java holds known numbers of duplicate strings,
// empty and sparse maps and lists (in classes of its own), boxes and zero-filled arrays; its dump
// must show exactly those (the JDK's own objects can only add to the shared classes' rows).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "analysis/analysis.h"
#include "formats/hprof/dump_file.h"
#include "support/jvm_process.h"
#include "support/row_lookup.h"

namespace heapd {
namespace {

using test::demo_jvm;
using test::java_main;
using test::run_command;

// Shallow sizes with compressed oops: a JDK 17 String is 24 bytes, arrays have a 16-byte base.
constexpr std::uint64_t string_size = 24;
std::uint64_t byte_array_size(std::uint64_t n) { return (16 + n + 7) / 8 * 8; }
std::uint64_t ref_array_size(std::uint64_t n) { return (16 + 4 * n + 7) / 8 * 8; }

const duplicate_string_entry* group(const waste_report& w, std::string_view content) {
    return test::find_row(w.duplicate_strings_top, &duplicate_string_entry::content, content);
}
const collection_waste_entry* collection(const waste_report& w, std::string_view name) {
    return test::find_row(w.collections, &collection_waste_entry::class_name, name);
}
const boxed_waste_entry* box(const waste_report& w, std::string_view name) {
    return test::find_row(w.boxed, &boxed_waste_entry::class_name, name);
}
const histogram_entry* histogram_row(const analysis_report& r, std::string_view name) {
    return test::find_row(r.histogram, &histogram_entry::class_name, name);
}

class waste_jvm : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new test::scratch_dir;
        demo_jvm jvm(java_main{"Waste"}, {"-Xmx256m"}, {});
        ASSERT_TRUE(jvm.ready());
        auto d = jvm.jcmd({"GC.heap_dump", file()});
        ASSERT_EQ(d.exit_code, 0) << d.out << d.err;
    }
    static void TearDownTestSuite() {
        delete dir_;
        dir_ = nullptr;
    }
    static std::string file() { return dir_->file("waste.hprof"); }
    static test::scratch_dir* dir_;
};
test::scratch_dir* waste_jvm::dir_ = nullptr;

TEST_F(waste_jvm, finds_the_known_waste_of_a_real_jvm) {
    auto dump = dump_file::open(file());
    ASSERT_TRUE(dump.has_value()) << dump.error().describe();
    analysis_options o;
    o.top = 0;
    o.largest = 0;  // every duplicate-string group
    o.threads = false;
    o.retained = false;
    auto report = analyze_dump(dump->bytes(), o);
    ASSERT_TRUE(report.has_value()) << report.error().describe();
    const analysis_report& r = *report;
    ASSERT_EQ(r.summary.layout, "64-bit, compressed oops");
    ASSERT_TRUE(r.summary.layout_inferred);
    const histogram_entry* strings = histogram_row(r, "java.lang.String");
    ASSERT_NE(strings, nullptr);
    ASSERT_EQ(strings->shallow_bytes, strings->instances * string_size);
    const waste_report& w = r.waste;
    ASSERT_TRUE(w.computed);

    // Duplicate strings: own arrays, one shared array, UTF-16, and contents cut for display.
    const duplicate_string_entry* latin = group(w, "waste-dup-latin");
    ASSERT_NE(latin, nullptr);
    EXPECT_EQ(latin->copies, 1000u);
    EXPECT_EQ(latin->length, 15u);
    EXPECT_EQ(latin->saving_bytes, 999 * (string_size + byte_array_size(15)));
    const duplicate_string_entry* shared = group(w, "waste-shared-array");
    ASSERT_NE(shared, nullptr);
    EXPECT_EQ(shared->copies, 500u);
    EXPECT_EQ(shared->saving_bytes, 499 * string_size);
    const duplicate_string_entry* utf16 = group(w, "waste-utf16-\xE2\x82\xAC");
    ASSERT_NE(utf16, nullptr);
    EXPECT_EQ(utf16->copies, 200u);
    EXPECT_EQ(utf16->length, 13u);
    EXPECT_EQ(utf16->saving_bytes, 199 * (string_size + byte_array_size(26)));
    const duplicate_string_entry* cut = group(w, "waste-long-" + std::string(39, 'x') + "...");
    ASSERT_NE(cut, nullptr);
    EXPECT_EQ(cut->copies, 50u);
    EXPECT_EQ(cut->length, 111u);
    EXPECT_EQ(cut->saving_bytes, 49 * (string_size + byte_array_size(111)));
    EXPECT_GE(w.duplicate_string_groups, 4u);
    EXPECT_EQ(w.duplicate_strings_top.size(), w.duplicate_string_groups);
    std::uint64_t strings_total = 0, saving_total = 0;
    for (const auto& d : w.duplicate_strings_top) {
        strings_total += d.copies;
        saving_total += d.saving_bytes;
    }
    EXPECT_EQ(w.duplicate_strings, strings_total);
    EXPECT_EQ(w.duplicate_string_saving, saving_total);
    EXPECT_GE(w.duplicate_string_saving, latin->saving_bytes + shared->saving_bytes + utf16->saving_bytes);

    // Collections: each shape in a class of its own, so its row is exact.
    struct want {
        const char* name;
        std::uint64_t count, empty, sparse, saving;
    };
    const want rows[] = {
        {"Waste$EmptyMap", 400, 400, 0, 400 * ref_array_size(16)},
        {"Waste$SparseMap", 300, 0, 300, 300 * (ref_array_size(256) - ref_array_size(4))},
        {"Waste$LazyMap", 50, 0, 0, 0},
        {"Waste$FullMap", 20, 0, 0, 0},
        {"Waste$EmptyList", 500, 500, 0, 500 * ref_array_size(100)},
        {"Waste$SparseList", 250, 0, 250, 250 * (ref_array_size(40) - ref_array_size(2))},
        {"Waste$UnallocatedList", 60, 0, 0, 0},
        {"Waste$EmptyConcurrentMap", 100, 100, 0, 100 * ref_array_size(16)},
        {"Waste$SparseConcurrentMap", 100, 0, 100, 100 * (ref_array_size(16) - ref_array_size(2))},
    };
    for (const want& row : rows) {
        SCOPED_TRACE(row.name);
        const collection_waste_entry* c = collection(w, row.name);
        ASSERT_NE(c, nullptr);
        EXPECT_EQ(c->count, row.count);
        EXPECT_EQ(c->empty, row.empty);
        EXPECT_EQ(c->sparse, row.sparse);
        EXPECT_EQ(c->saving_bytes, row.saving);
    }
    // The HashSets' maps are plain HashMaps, among the JDK's own.
    const collection_waste_entry* hash_map = collection(w, "java.util.HashMap");
    ASSERT_NE(hash_map, nullptr);
    EXPECT_GE(hash_map->count, 100u);
    EXPECT_GE(hash_map->sparse, 100u);
    EXPECT_GE(hash_map->saving_bytes, 100 * (ref_array_size(64) - ref_array_size(2)));
    EXPECT_EQ(collection(w, "java.util.HashSet"), nullptr);

    // Boxes: the program's values are a lower bound; bytes agree with the histogram.
    struct want_box {
        const char* name;
        std::uint64_t count, distinct;
    };
    for (const want_box& b : {want_box{"java.lang.Long", 5000, 100}, want_box{"java.lang.Integer", 3000, 10},
                              want_box{"java.lang.Double", 1000, 1}}) {
        SCOPED_TRACE(b.name);
        const boxed_waste_entry* e = box(w, b.name);
        ASSERT_NE(e, nullptr);
        const histogram_entry* h = histogram_row(r, b.name);
        ASSERT_NE(h, nullptr);
        EXPECT_EQ(e->count, h->instances);
        EXPECT_EQ(e->bytes, h->shallow_bytes);
        EXPECT_GE(e->count, b.count);
        EXPECT_LE(e->distinct_values, e->count);
        EXPECT_GE(e->saving_bytes, (b.count - b.distinct) * (h->shallow_bytes / h->instances));
    }

    // Zero-filled arrays: 700 short[100] (216 bytes each) beside 10 that are not.
    const zero_array_entry* shorts = nullptr;
    for (const auto& z : w.zero_arrays)
        if (z.class_name == "short[]") shorts = &z;
    ASSERT_NE(shorts, nullptr);
    EXPECT_GE(shorts->count, 700u);
    EXPECT_GE(shorts->bytes, 700u * 216);
    const histogram_entry* short_row = histogram_row(r, "short[]");
    ASSERT_NE(short_row, nullptr);
    EXPECT_LE(shorts->count, short_row->instances - 10);

    EXPECT_EQ(w.saving_bytes, w.duplicate_string_saving + w.collection_saving + w.boxed_saving + w.zero_array_saving);
}

TEST_F(waste_jvm, heapd_analyze_prints_the_waste_unless_told_not_to) {
    auto text = run_command({test::heapd_binary(), "analyze", "--no-retained", "--no-threads", file()});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("\nWaste ("), std::string::npos);
    EXPECT_NE(text.out.find("\"waste-dup-latin\" (15)\n"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("Waste$SparseMap"), std::string::npos);

    auto json = run_command({test::heapd_binary(), "analyze", "--json", "--no-retained", "--no-threads", file()});
    ASSERT_EQ(json.exit_code, 0) << json.err;
    const nlohmann::json j = nlohmann::json::parse(json.out);
    ASSERT_TRUE(j.contains("waste"));
    const nlohmann::json& w = j.at("waste");
    EXPECT_EQ(w.at("saving_bytes").get<std::uint64_t>(),
              w.at("duplicate_strings").at("saving_bytes").get<std::uint64_t>() +
                  w.at("collections").at("saving_bytes").get<std::uint64_t>() +
                  w.at("boxed").at("saving_bytes").get<std::uint64_t>() +
                  w.at("zero_arrays").at("saving_bytes").get<std::uint64_t>());
    EXPECT_LE(w.at("duplicate_strings").at("top").size(), 20u);  // the default --top

    auto off = run_command({test::heapd_binary(), "analyze", "--no-waste", "--no-retained", "--no-threads", file()});
    ASSERT_EQ(off.exit_code, 0) << off.err;
    EXPECT_EQ(off.out.find("\nWaste ("), std::string::npos);
    auto off_json =
        run_command({test::heapd_binary(), "analyze", "--json", "--no-waste", "--no-retained", "--no-threads", file()});
    ASSERT_EQ(off_json.exit_code, 0) << off_json.err;
    EXPECT_FALSE(nlohmann::json::parse(off_json.out).contains("waste"));
}

}  // namespace
}  // namespace heapd
