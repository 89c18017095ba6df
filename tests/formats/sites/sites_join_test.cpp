// Joining an allocation profile with a report: by class name, per suspect, the biggest sites first,
// small shares left out, the application's frame named as the origin.
#include "formats/sites/sites_join.h"

#include <gtest/gtest.h>

#include "formats/report/report_json.h"

namespace heapd::sites {
namespace {

allocation_profile profile() {
    allocation_profile p;
    p.has_tables = true;
    p.agent_version = "0.1.0";
    p.interval = 524288;
    p.seconds = 30;
    p.samples = 1000;
    p.classes = {"java.util.HashMap$Node", "byte[]", "java.lang.String"};
    p.methods = {{"java.util.HashMap", "newNode", "()V", "HashMap.java"},
                 {"java.util.HashMap", "putVal", "()V", "HashMap.java"},
                 {"app.Cache", "fill", "()V", "Cache.java"},
                 {"app.Other", "run", "()V", "Other.java"}};
    auto site = [](std::uint32_t klass, std::vector<profile_frame> frames, double live) {
        profile_site s;
        s.klass = klass;
        s.frames = std::move(frames);
        s.live_bytes = live;
        s.live_objects = live / 32;
        s.bytes = live * 2;
        return s;
    };
    p.sites = {site(0, {{0, 1901}, {1, 627}, {2, 15}}, 9000), site(0, {{3, 7}}, 1000),
               site(0, {{0, 1901}, {1, 627}, {3, 9}}, 50),  // under 1% of the class: left out
               site(1, {{2, 16}}, 40000), site(2, {{3, 8}}, 100)};
    return p;
}

analysis_report report() {
    analysis_report r;
    r.retention.computed = true;
    leak_suspect map;
    map.suspect = {1, "java.util.HashMap", 48, 50000};
    map.accumulated = {{"java.util.HashMap$Node", 1000, 49000}, {"java.lang.Integer", 1000, 16000}};
    leak_suspect strings;
    strings.is_class = true;
    strings.suspect = {2, "java.lang.String", 24, 24};
    r.retention.leak_suspects = {map, strings};
    return r;
}

TEST(sites_join, tells_each_suspect_where_its_classes_were_allocated) {
    analysis_report r = report();
    join_allocation_sites(r, profile());
    EXPECT_TRUE(r.allocations.joined);
    EXPECT_EQ(r.allocations.samples, 1000u);
    const auto& map = r.retention.leak_suspects[0].allocated_at;
    ASSERT_EQ(map.size(), 2u);  // Integer was never sampled; the third Node site is under 1%
    EXPECT_EQ(map[0].class_name, "java.util.HashMap$Node");
    EXPECT_EQ(map[0].origin, "app.Cache.fill(Cache.java:15)");
    EXPECT_EQ(map[0].frames.front(), "java.util.HashMap.newNode(HashMap.java:1901)");
    EXPECT_NEAR(map[0].share, 9000.0 / 10050, 1e-9);
    EXPECT_EQ(map[0].live_bytes, 9000u);
    EXPECT_EQ(map[1].origin, "app.Other.run(Other.java:7)");
    const auto& strings = r.retention.leak_suspects[1].allocated_at;
    ASSERT_EQ(strings.size(), 1u);  // a class suspect: its own class
    EXPECT_EQ(strings[0].class_name, "java.lang.String");
    EXPECT_DOUBLE_EQ(strings[0].share, 1.0);
}

TEST(sites_join, keeps_the_join_through_the_reports_json) {
    analysis_report r = report();
    join_allocation_sites(r, profile());
    auto back = report_from_json(to_json(r));
    ASSERT_TRUE(back.has_value()) << back.error().describe();
    EXPECT_TRUE(back->allocations.joined);
    EXPECT_EQ(back->allocations.interval, 524288);
    ASSERT_EQ(back->retention.leak_suspects.size(), 2u);
    const auto& a = back->retention.leak_suspects[0].allocated_at;
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(a[0].origin, "app.Cache.fill(Cache.java:15)");
    EXPECT_EQ(a[0].frames.size(), 3u);
}

TEST(sites_join, names_the_first_frame_outside_the_jdk) {
    EXPECT_EQ(origin_frame({"java.util.Arrays.copyOf(Arrays.java:3512)", "jdk.internal.X.y(X.java:1)",
                            "javax.a.B.c(B.java:2)", "sun.a.B.c(B.java:3)", "com.sun.a.B.c(B.java:4)",
                            "app.Main.main(Main.java:5)"}),
              "app.Main.main(Main.java:5)");
    EXPECT_EQ(origin_frame({"java.lang.Thread.run(Thread.java:833)"}), "java.lang.Thread.run(Thread.java:833)");
    EXPECT_EQ(origin_frame({}), "(no frames)");
}

TEST(sites_join, a_profile_without_tables_joins_nothing) {
    analysis_report r = report();
    allocation_profile p = profile();
    p.has_tables = false;
    join_allocation_sites(r, p);
    EXPECT_FALSE(r.allocations.joined);
    EXPECT_TRUE(r.retention.leak_suspects[0].allocated_at.empty());
}

}  // namespace
}  // namespace heapd::sites
