// The SITES table: grouping by site (cut to a depth), method and class; ranking; cutoff; frames.
#include "formats/sites/site_ranking.h"

#include <gtest/gtest.h>

namespace heapd::sites {
namespace {

// Three sites: two of byte[] from keep() at lines 10 and 11 (one caller), one of String from fill().
allocation_profile profile() {
    allocation_profile p;
    p.classes = {"byte[]", "java.lang.String"};
    p.methods = {{"App", "keep", "()V", "App.java"},
                 {"App", "main", "([Ljava/lang/String;)V", "App.java"},
                 {"App", "fill", "()V", ""},
                 {"java.lang.Object", "clone", "()V", "Object.java"}};
    auto site = [](std::uint32_t klass, std::vector<profile_frame> frames, double live, double bytes) {
        profile_site s;
        s.klass = klass;
        s.frames = std::move(frames);
        s.live_bytes = live;
        s.live_objects = live / 100;
        s.bytes = bytes;
        s.objects = bytes / 100;
        s.samples = 1;
        return s;
    };
    p.sites = {site(0, {{0, 10}, {1, 50}}, 600, 1000), site(0, {{0, 11}, {1, 50}}, 300, 500),
               site(1, {{2, -1}, {3, -2}}, 100, 8500)};
    return p;
}

TEST(site_ranking, ranks_sites_by_live_bytes_with_shares) {
    table_options o;
    o.cutoff = 0;
    sites_report t = rank_sites(profile(), o, true);
    ASSERT_EQ(t.rows.size(), 3u);
    EXPECT_DOUBLE_EQ(t.live_bytes, 1000);
    EXPECT_DOUBLE_EQ(t.bytes, 10000);
    EXPECT_EQ(t.rows[0].klass, "byte[]");
    EXPECT_EQ(t.rows[0].frames, (std::vector<std::string>{"App.keep(App.java:10)", "App.main(App.java:50)"}));
    EXPECT_DOUBLE_EQ(t.rows[0].self, 0.6);
    EXPECT_DOUBLE_EQ(t.rows[1].accumulated, 0.9);
    EXPECT_EQ(t.rows[2].frames,
              (std::vector<std::string>{"App.fill(Unknown Source)", "java.lang.Object.clone(Native Method)"}));
}

TEST(site_ranking, groups_by_depth_method_and_class) {
    table_options o;
    o.cutoff = 0;
    o.depth = 0;
    sites_report by_nothing = rank_sites(profile(), o, true);  // depth 0: one row per class
    ASSERT_EQ(by_nothing.rows.size(), 2u);
    EXPECT_DOUBLE_EQ(by_nothing.rows[0].live_bytes, 900);
    o.by = grouping::method;
    sites_report by_method = rank_sites(profile(), o, true);
    ASSERT_EQ(by_method.rows.size(), 2u);
    EXPECT_EQ(by_method.rows[0].frames, std::vector<std::string>{"App.keep"});
    EXPECT_TRUE(by_method.rows[0].klass.empty());
    o.by = grouping::klass;
    o.order = ranking::allocated;
    sites_report by_class = rank_sites(profile(), o, true);
    ASSERT_EQ(by_class.rows.size(), 2u);
    EXPECT_EQ(by_class.rows[0].klass, "java.lang.String");
    EXPECT_DOUBLE_EQ(by_class.rows[0].self, 0.85);
}

TEST(site_ranking, leaves_out_rows_below_the_cutoff_or_past_top) {
    table_options o;
    o.cutoff = 0.2;
    sites_report t = rank_sites(profile(), o, true);
    EXPECT_EQ(t.rows.size(), 2u);
    EXPECT_EQ(t.rows_left_out, 1u);
    o.cutoff = 0;
    o.top = 1;
    sites_report top = rank_sites(profile(), o, true);
    EXPECT_EQ(top.rows.size(), 1u);
    EXPECT_EQ(top.rows_left_out, 2u);
}

// An answer whose names expand: one class named with 256 KiB, 64 methods named with 4 KiB each,
// 200 sites of 64 frames each (about 430 KB of JSON, each row's frames about 580 KiB of text before
// the names are cut).
std::string amplified_answer() {
    std::string answer = R"({"protocol":1,"agent":"x","command":"show","error":"","sampling":true,"interval":1,)"
                         R"("depth":64,"seconds":1,"dropped_ring":0,"memory_bytes":0,"samples":200,"dropped_sites":0,)"
                         R"("dropped_live":0,"dropped_unnamed":0,"classes":[")" +
                         std::string(256 * 1024, 'C') + R"("],"methods":[)";
    for (int m = 0; m < 64; ++m)
        answer += std::string(m == 0 ? "" : ",") + R"({"class":"L)" + std::string(4096, 'K') + R"(;","name":")" +
                  std::string(4096, 'n') + R"(","descriptor":"()V","file":"F.java"})";
    answer += R"(],"sites":[)";
    for (int i = 0; i < 200; ++i) {
        answer += std::string(i == 0 ? "" : ",") + R"({"class":0,"frames":[)";
        for (int f = 0; f < 64; ++f)
            answer += std::string(f == 0 ? "" : ",") + "[" + std::to_string(f) + "," + std::to_string(i) + "]";
        answer += R"(],"samples":1,"live_samples":1,"objects":1,"bytes":)" + std::to_string(1000 + i) +
                  R"(,"live_objects":1,"live_bytes":)" + std::to_string(1000 + i) + "}";
    }
    return answer + "]}";
}

std::size_t text_bytes(const sites_report& t) {
    std::size_t n = 0;
    for (const site_row& r : t.rows) {
        n += r.klass.size();
        for (const std::string& f : r.frames) n += f.size();
    }
    return n;
}

TEST(site_ranking, an_answer_whose_names_expand_spells_out_only_the_rows_shown_with_names_cut) {
    auto p = parse_allocation_profile(amplified_answer());
    ASSERT_TRUE(p.has_value()) << p.error().describe();
    ASSERT_EQ(p->classes.size(), 1u);
    EXPECT_LE(p->classes[0].size(), max_name_bytes + 32);
    EXPECT_NE(p->classes[0].find("(262144 bytes)"), std::string::npos);
    table_options o;
    o.depth = 64;
    o.top = 1;
    sites_report one = rank_sites(*p, o, true);
    ASSERT_EQ(one.rows.size(), 1u);
    EXPECT_EQ(one.rows_left_out, 199u);
    EXPECT_EQ(one.rows[0].frames.size(), 64u);
    EXPECT_LT(text_bytes(one), 64u * 3 * max_name_bytes);
    // All of them: the names shown stop at the table's bound, and the table says so.
    o.top = 0;
    o.cutoff = 0;
    sites_report all = rank_sites(*p, o, true);
    EXPECT_TRUE(all.cut_at_size);
    EXPECT_GT(all.rows_left_out, 0u);
    EXPECT_LT(text_bytes(all), max_table_text_bytes + 64u * 3 * max_name_bytes);
    EXPECT_NE(render_sites_text(all).find("stop where their names reach the table's bound"), std::string::npos);
}

}  // namespace
}  // namespace heapd::sites
