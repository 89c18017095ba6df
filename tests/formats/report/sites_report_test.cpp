// The allocation-sites table's JSON (as the daemon sends it) and text (as heapd and heapctl print it).
#include "formats/report/sites_report.h"

#include <gtest/gtest.h>

namespace heapd {
namespace {

sites_report table() {
    sites_report r;
    r.agent = "0.1.0";
    r.interval = 524288;
    r.sampled_depth = 16;
    r.seconds = 12.5;
    r.samples = 4321;
    r.dropped = {1, 2, 3, 4};
    r.collected_first = true;
    r.depth = 2;
    r.cutoff = 0.0001;
    r.live_bytes = 200.0 * 1024 * 1024;
    r.live_objects = 200;
    r.bytes = 3.0 * 1024 * 1024 * 1024;
    r.objects = 3e6;
    r.rows_left_out = 7;
    site_row row;
    row.klass = "byte[]";
    row.frames = {"App.keep(App.java:25)", "App.main(App.java:46)"};
    row.live_bytes = r.live_bytes;
    row.live_objects = 200;
    row.bytes = r.live_bytes;
    row.objects = 200;
    row.samples = 173;
    row.self = row.accumulated = 1.0;
    r.rows = {row};
    return r;
}

TEST(sites_report, reads_back_what_it_writes) {
    auto back = sites_report_from_json(to_json(table()));
    ASSERT_TRUE(back.has_value()) << back.error().describe();
    EXPECT_EQ(back->samples, 4321u);
    EXPECT_EQ(back->dropped.not_watched, 4u);
    EXPECT_TRUE(back->collected_first);
    ASSERT_EQ(back->rows.size(), 1u);
    EXPECT_EQ(back->rows[0].frames, table().rows[0].frames);
    EXPECT_EQ(to_json(*back), to_json(table()));
    sites_report by_method = table();
    by_method.by = "method";
    by_method.rows[0].frames = {"App.keep"};
    auto method = sites_report_from_json(to_json(by_method));
    ASSERT_TRUE(method.has_value());
    EXPECT_EQ(method->rows[0].frames, std::vector<std::string>{"App.keep"});
    auto j = to_json(table());
    j["by"] = "thread";
    EXPECT_FALSE(sites_report_from_json(j).has_value());
    j = to_json(table());
    j.erase("rows");
    EXPECT_FALSE(sites_report_from_json(j).has_value());
}

TEST(sites_report, prints_the_rows_with_their_stacks_and_what_was_dropped) {
    std::string text = render_sites_text(table());
    EXPECT_NE(text.find("4,321 samples in 12.5 s, one per 512 KiB"), std::string::npos) << text;
    EXPECT_NE(text.find("Live: still reachable after a full collection"), std::string::npos);
    EXPECT_NE(text.find("1 with no free slot, 2 past the site table's cap"), std::string::npos) << text;
    EXPECT_NE(text.find("200 MiB         200  byte[]\n          at App.keep(App.java:25)\n          at "
                        "App.main(App.java:46)\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("7 more below 0.01% of the live bytes"), std::string::npos) << text;
}

TEST(sites_report, shows_names_from_the_jvm_as_text_only) {
    sites_report r = table();
    r.rows[0].klass = "Evil\x1b]0;owned\x07";
    r.rows[0].frames = {"A.b(\x1b[2J.java:1)"};
    std::string text = render_sites_text(r);
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
    EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
}

}  // namespace
}  // namespace heapd
