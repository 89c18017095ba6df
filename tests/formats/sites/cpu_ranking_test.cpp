// CPU samples from an agent's answer: read and checked, stacks cut to a depth and ranked, and the
// table's JSON read back.
#include "formats/sites/cpu_ranking.h"
#include "formats/sites/site_ranking.h"

#include <gtest/gtest.h>

namespace heapd::sites {
namespace {

const char* answer = R"({"protocol":1,"agent":"0.1.0","command":"cpu_stop","error":"","sampling":false,
  "interval":0,"depth":0,"seconds":0,"dropped_ring":0,"memory_bytes":900,"cpu_sampling":true,
  "cpu_period_ms":10,"cpu_seconds":2.0,"cpu_depth":8,"cpu_ticks":200,"cpu_samples":300,"cpu_dropped":1,
  "cpu_methods":[{"class":"LApp;","name":"spin","descriptor":"()J","file":"App.java"},
                 {"class":"LApp;","name":"main","descriptor":"()V","file":"App.java"},
                 {"class":"LApp;","name":"other","descriptor":"()V","file":"App.java"}],
  "cpu_traces":[{"frames":[[0,12],[1,40]],"count":150},{"frames":[[0,12],[2,7]],"count":90},
                {"frames":[[2,9]],"count":60}]})";

TEST(cpu_ranking, reads_and_ranks_the_samples) {
    auto p = parse_allocation_profile(answer);
    ASSERT_TRUE(p.has_value()) << p.error().describe();
    EXPECT_TRUE(p->has_cpu);
    EXPECT_EQ(p->cpu_ticks, 200u);
    ASSERT_EQ(p->cpu_traces.size(), 3u);
    cpu_report full = rank_cpu(*p, 0, 0);
    ASSERT_EQ(full.rows.size(), 3u);
    EXPECT_EQ(full.rows[0].frames, (std::vector<std::string>{"App.spin(App.java:12)", "App.main(App.java:40)"}));
    EXPECT_DOUBLE_EQ(full.rows[0].self, 0.5);
    EXPECT_DOUBLE_EQ(full.rows[1].accumulated, 0.8);
    // Cut to the running frame: the two spin() stacks are one row.
    cpu_report one = rank_cpu(*p, 1, 0);
    ASSERT_EQ(one.rows.size(), 2u);
    EXPECT_EQ(one.rows[0].count, 240u);
    cpu_report top = rank_cpu(*p, 0, 1);
    EXPECT_EQ(top.rows.size(), 1u);
    EXPECT_EQ(top.rows_left_out, 2u);
    auto back = cpu_report_from_json(to_json(full));
    ASSERT_TRUE(back.has_value()) << back.error().describe();
    EXPECT_EQ(to_json(*back), to_json(full));
    const std::string text = render_cpu_text(full);
    EXPECT_NE(text.find("300 in 2.0 s, every 10 ms (200 ticks)"), std::string::npos) << text;
    EXPECT_NE(text.find("App.spin(App.java:12)\n          at App.main(App.java:40)"), std::string::npos) << text;
}

TEST(cpu_ranking, refuses_a_trace_of_an_unlisted_method) {
    std::string bad = answer;
    bad.replace(bad.find("[[2,9]]"), 7, "[[3,9]]");
    auto p = parse_allocation_profile(bad);
    ASSERT_FALSE(p.has_value());
    EXPECT_NE(p.error().message.find("method 3 is not listed"), std::string::npos) << p.error().message;
}

// 64 methods named with 8 KiB each, 200 stacks of 64 frames: only the row shown is spelled out,
// with every name cut; all rows stop at the table's bound.
TEST(cpu_ranking, an_answer_whose_names_expand_spells_out_only_the_rows_shown) {
    std::string big = R"({"protocol":1,"agent":"x","command":"cpu_show","error":"","sampling":false,"interval":0,)"
                      R"("depth":0,"seconds":0,"dropped_ring":0,"memory_bytes":0,"cpu_sampling":true,)"
                      R"("cpu_period_ms":10,"cpu_seconds":1,"cpu_depth":64,"cpu_ticks":200,"cpu_samples":200,)"
                      R"("cpu_dropped":0,"cpu_methods":[)";
    for (int m = 0; m < 64; ++m)
        big += std::string(m == 0 ? "" : ",") + R"({"class":"L)" + std::string(8192, 'K') + R"(;","name":")" +
               std::string(8192, 'n') + R"(","descriptor":"()V","file":"F.java"})";
    big += R"(],"cpu_traces":[)";
    for (int t = 0; t < 200; ++t) {
        big += std::string(t == 0 ? "" : ",") + R"({"frames":[)";
        for (int f = 0; f < 64; ++f)
            big += std::string(f == 0 ? "" : ",") + "[" + std::to_string(f) + "," + std::to_string(t) + "]";
        big += R"(],"count":)" + std::to_string(1 + t) + "}";
    }
    big += "]}";
    auto p = parse_allocation_profile(big);
    ASSERT_TRUE(p.has_value()) << p.error().describe();
    cpu_report one = rank_cpu(*p, 64, 1);
    ASSERT_EQ(one.rows.size(), 1u);
    EXPECT_EQ(one.rows_left_out, 199u);
    std::size_t bytes = 0;
    for (const std::string& f : one.rows[0].frames) bytes += f.size();
    EXPECT_LT(bytes, 64u * 3 * max_name_bytes);
    cpu_report all = rank_cpu(*p, 64, 0);
    EXPECT_TRUE(all.cut_at_size);
    bytes = 0;
    for (const cpu_row& r : all.rows)
        for (const std::string& f : r.frames) bytes += f.size();
    EXPECT_LT(bytes, max_table_text_bytes + 64u * 3 * max_name_bytes);
}

}  // namespace
}  // namespace heapd::sites
