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

}  // namespace
}  // namespace heapd::sites
