// The analysis index is used only for the dump, format version and options it was made from.
#include "analysis/analysis_index.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/jvm_process.h"

namespace heapd {
namespace {

using test::scratch_dir;

void write_file(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

analysis_report sample_report() {
    analysis_report r;
    r.summary.format = "JAVA PROFILE 1.0.2";
    r.summary.id_size = 8;
    r.summary.instances = 3;
    r.summary.classes = 1;
    r.summary.shallow_bytes = 72;
    r.histogram = {{0x10, "demo.Thing", 3, 72}};
    return r;
}

TEST(analysis_index, identity_follows_size_mtime_and_both_ends_of_the_file) {
    scratch_dir dir;
    const std::string f = dir.file("d.hprof");
    std::string body(300000, 'x');
    write_file(f, body);
    auto a = identify_dump(f);
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->size, 300000u);
    EXPECT_EQ(*identify_dump(f), *a);
    auto mtime = std::filesystem::last_write_time(f);
    auto changed = [&](std::size_t at) {
        std::string b = body;
        b[at] = 'y';
        write_file(f, b);
        std::filesystem::last_write_time(f, mtime);  // same size and mtime: only the hash can tell
        return *identify_dump(f);
    };
    EXPECT_NE(changed(10).edge_hash, a->edge_hash);
    EXPECT_NE(changed(299990).edge_hash, a->edge_hash);
    EXPECT_EQ(changed(150000).edge_hash, a->edge_hash);  // the middle is not hashed: size and mtime guard it
    write_file(f, body);
    std::filesystem::last_write_time(f, mtime + std::chrono::seconds(1));
    EXPECT_NE(identify_dump(f)->mtime_ns, a->mtime_ns);
    EXPECT_FALSE(identify_dump(dir.file("absent")).has_value());
}

TEST(analysis_index, round_trip_and_every_mismatch_is_a_miss) {
    scratch_dir dir;
    const std::string dump = dir.file("d.hprof");
    write_file(dump, std::string(1000, 'z'));
    const dump_identity id = *identify_dump(dump);
    const std::string index = index_path(dump);
    EXPECT_EQ(index, dump + ".heapd-index");
    EXPECT_EQ(index_path("/a/b/d.hprof", "/cache"), "/cache/d.hprof.heapd-index");
    analysis_options o;
    const std::string key = index_options_key(o);
    ASSERT_TRUE(save_index(index, id, key, sample_report()).has_value());
    EXPECT_EQ(std::filesystem::status(index).permissions() & std::filesystem::perms::all,
              std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    auto back = load_index(index, id, key);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->histogram.at(0).class_name, "demo.Thing");

    dump_identity other = id;
    other.size += 1;
    EXPECT_FALSE(load_index(index, other, key).has_value());
    other = id;
    other.mtime_ns += 1;
    EXPECT_FALSE(load_index(index, other, key).has_value());
    other = id;
    other.edge_hash ^= 1;
    EXPECT_FALSE(load_index(index, other, key).has_value());
    analysis_options no_threads;
    no_threads.threads = false;
    EXPECT_NE(index_options_key(no_threads), key);
    EXPECT_FALSE(load_index(index, id, index_options_key(no_threads)).has_value());
    analysis_options threshold;
    threshold.suspect_threshold = 0.2;
    EXPECT_FALSE(load_index(index, id, index_options_key(threshold)).has_value());

    // Another format version, damaged or absent files: misses, never errors.
    std::string text;
    std::getline(std::ifstream(index), text, '\0');
    std::string older = text;
    older.replace(older.find("\"version\":4"), 11, "\"version\":3");
    write_file(index, older);
    EXPECT_FALSE(load_index(index, id, key).has_value());
    write_file(index, text.substr(0, text.size() / 2));
    EXPECT_FALSE(load_index(index, id, key).has_value());
    write_file(index, "[1,2,3]");
    EXPECT_FALSE(load_index(index, id, key).has_value());
    EXPECT_FALSE(load_index(dir.file("none"), id, key).has_value());
    // A failed save leaves nothing behind.
    EXPECT_FALSE(save_index(dir.file("no/such/dir/x.heapd-index"), id, key, sample_report()).has_value());
}

}  // namespace
}  // namespace heapd
