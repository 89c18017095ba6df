// heapd strip on a real dump: same histogram, no primitive array contents, much smaller compressed;
// and the analysis of a stripped copy, which says it is stripped instead of reading zeros as text.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "support/jvm_process.h"

namespace heapd::test {
namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

std::uint64_t gzipped_size(const std::string& path) {
    auto r = run_command({"gzip", "-c", "-6", path});
    EXPECT_EQ(r.exit_code, 0);
    return r.out.size();
}

nlohmann::json histogram_of(const std::string& file) {
    auto r = run_command({heapd_binary(), "analyze", "--json", "--top", "0", "--no-threads", file});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out).at("histogram");
}

TEST(strip_command, keeps_shapes_and_drops_contents) {
    demo_jvm jvm({}, {"3000"});
    ASSERT_TRUE(jvm.ready());
    scratch_dir dir;
    const std::string in = dir.file("heap.hprof"), out = dir.file("stripped.hprof"), kept = dir.file("kept.hprof");
    ASSERT_EQ(jvm.jcmd({"GC.heap_dump", in}).exit_code, 0);
    auto r = run_command({heapd_binary(), "strip", in, out});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_EQ(run_command({heapd_binary(), "strip", "--keep-strings", in, kept}).exit_code, 0);

    EXPECT_EQ(std::filesystem::file_size(in), std::filesystem::file_size(out));
    EXPECT_EQ(histogram_of(in), histogram_of(out));
    EXPECT_EQ(histogram_of(in), histogram_of(kept));
    // The demo's strings ("user-17") are gone from the stripped copy, kept with --keep-strings.
    EXPECT_NE(slurp(in).find("user-1717"), std::string::npos);
    EXPECT_EQ(slurp(out).find("user-1717"), std::string::npos);
    EXPECT_NE(slurp(kept).find("user-1717"), std::string::npos);
    // Compressed, the stripped copy is markedly smaller (the demo's payloads are random bytes).
    auto plain = gzipped_size(in), stripped = gzipped_size(out);
    EXPECT_LT(stripped * 10, plain * 6) << "gzip: original " << plain << " B, stripped " << stripped << " B";
    // Dumps hold secrets: the copies are readable by their owner only.
    for (const auto& f : {out, kept})
        EXPECT_EQ(std::filesystem::status(f).permissions() &
                      (std::filesystem::perms::group_all | std::filesystem::perms::others_all),
                  std::filesystem::perms::none)
            << f;
}

nlohmann::json report_of(const std::string& file) {
    auto r = run_command({heapd_binary(), "analyze", "--json", "--no-index", "--top", "0", file});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
}

TEST(strip_command, an_analysis_of_a_stripped_copy_says_so_and_reads_no_zeros_as_text) {
    demo_jvm jvm({}, {"3000"});
    ASSERT_TRUE(jvm.ready());
    scratch_dir dir;
    const std::string in = dir.file("heap.hprof"), out = dir.file("stripped.hprof"), kept = dir.file("kept.hprof");
    ASSERT_EQ(jvm.jcmd({"GC.heap_dump", in}).exit_code, 0);
    ASSERT_EQ(run_command({heapd_binary(), "strip", in, out}).exit_code, 0);
    ASSERT_EQ(run_command({heapd_binary(), "strip", "--keep-strings", in, kept}).exit_code, 0);
    const nlohmann::json original = report_of(in), stripped = report_of(out), strings_kept = report_of(kept);
    auto names = [](const nlohmann::json& r) {
        std::vector<std::string> out;
        for (const auto& t : r.at("threads")) out.push_back(t.at("name"));
        return out;
    };
    auto has = [](const std::vector<std::string>& v, const std::string& s) {
        return std::find(v.begin(), v.end(), s) != v.end();
    };

    // As the JVM wrote it: not stripped, thread names, duplicate strings and arrays of zeros.
    EXPECT_FALSE(original.at("summary").at("stripped"));
    EXPECT_FALSE(original.at("summary").at("strings_stripped"));
    EXPECT_TRUE(has(names(original), "main"));
    EXPECT_GT(original.at("waste").at("duplicate_strings").at("groups"), 0);
    EXPECT_FALSE(original.at("waste").at("zero_arrays").at("types").empty());

    // Stripped: said so; no thread name, duplicate string or array of zeros read from the zeros.
    EXPECT_TRUE(stripped.at("summary").at("stripped"));
    EXPECT_TRUE(stripped.at("summary").at("strings_stripped"));
    // The version Strings are zeros too: only the shape of String tells the version.
    EXPECT_EQ(stripped.at("summary").at("java_version"), "13 to 18");
    EXPECT_EQ(stripped.at("summary").at("version_source"), "the fields of java.lang.String");
    EXPECT_EQ(strings_kept.at("summary").at("java_version"), original.at("summary").at("java_version"));
    for (const std::string& n : names(stripped)) {
        EXPECT_NE(n.find(", name stripped>"), std::string::npos) << n;
        EXPECT_EQ(n.find('\0'), std::string::npos);
    }
    EXPECT_EQ(names(stripped).size(), names(original).size());
    EXPECT_EQ(stripped.at("waste").at("duplicate_strings").at("groups"), 0);
    EXPECT_TRUE(stripped.at("waste").at("zero_arrays").at("types").empty());
    EXPECT_EQ(stripped.at("waste").at("collections").at("saving_bytes"),
              original.at("waste").at("collections").at("saving_bytes"));

    // Strings kept: their contents and the thread names are read; arrays of zeros are not counted.
    EXPECT_TRUE(strings_kept.at("summary").at("stripped"));
    EXPECT_FALSE(strings_kept.at("summary").at("strings_stripped"));
    EXPECT_EQ(names(strings_kept), names(original));
    EXPECT_EQ(strings_kept.at("waste").at("duplicate_strings"), original.at("waste").at("duplicate_strings"));
    EXPECT_TRUE(strings_kept.at("waste").at("zero_arrays").at("types").empty());

    auto text = run_command({heapd_binary(), "analyze", "--no-index", out});
    EXPECT_NE(text.out.find("  Stripped every primitive array holds zeros"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("Duplicate strings       0 B  not counted: the dump is stripped"), std::string::npos);
}

TEST(strip_command, refuses_input_it_cannot_read) {
    scratch_dir dir;
    std::ofstream(dir.file("junk.hprof")) << "JAVA PROFILE 9.9\n";
    auto r = run_command({heapd_binary(), "strip", dir.file("junk.hprof"), dir.file("out.hprof")});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_FALSE(std::filesystem::exists(dir.file("out.hprof")));
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);  // no temp file left
}

}  // namespace
}  // namespace heapd::test
