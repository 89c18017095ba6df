// CPU samples from an agent's answer: read and checked, stacks cut to a depth and ranked, and the
// table's JSON read back.
#include "formats/sites/cpu_ranking.h"

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

}  // namespace
}  // namespace heapd::sites
