// The fleet's view: leak signatures that name a leak whatever the JVM (ids, sizes, indexes, chain
// lengths, run-time class names), findings grouped by them across hosts, growth per JVM, the filters,
// and the summary's JSON both ways.
#include <gtest/gtest.h>

#include <limits>

#include "formats/report/fleet_entry.h"
#include "formats/report/fleet_html.h"
#include "formats/report/fleet_view.h"
#include "formats/report/report_json.h"

namespace heapd {
namespace {

// The classic static-list leak as a report names it; ids, sizes and lengths as given.
leak_suspect list_leak(std::uint64_t id, std::uint64_t retained, std::uint64_t index, std::uint64_t chain,
                       const std::string& element = "Sessions$Session") {
    leak_suspect s;
    s.suspect = {id, "java.util.ArrayList", 24, retained};
    s.retained_bytes = retained;
    s.share = 0.9;
    s.accumulation = {id + 8, "java.lang.Object[]", 4096, retained - 24};
    s.path.root_kinds = {"sticky_class"};
    s.path.steps = {{id + 16, "class Sessions", true, "LEAK", 1},
                    {id, "java.util.ArrayList", false, "elementData", 1},
                    {id + 8, "java.lang.Object[]", false, "[" + std::to_string(index) + "]", 1},
                    {id + 24, element, false, "next", chain},
                    {id + 32, element, false, "next", 1},
                    {id + 40, element, false, "", 1}};
    s.path.length = 5 + chain;
    return s;
}

fleet_entry entry(const std::string& host, const std::string& service, std::int64_t pid, std::int64_t time_ms,
                  std::vector<leak_suspect> suspects, const std::string& trigger = "request") {
    analysis_report r;
    r.retention.reachable_bytes = 100u << 20;
    r.retention.leak_suspects = std::move(suspects);
    fleet_context c;
    c.host = host;
    c.service = service;
    c.pid = pid;
    c.jvm_start_time = static_cast<std::uint64_t>(pid) * 100;
    c.created_ms = time_ms;
    c.trigger = trigger;
    c.id = std::to_string(time_ms);
    c.key = "prod/" + host + "/" + service + "/" + c.id;
    return fleet_entry_of(r, c);
}

TEST(leak_signature, leaves_out_ids_sizes_indexes_and_chain_lengths) {
    const std::string a = leak_signature(list_leak(0x1000, 50u << 20, 3, 1));
    const std::string b = leak_signature(list_leak(0x7f00aa00, 900u << 20, 12345, 99999));
    EXPECT_EQ(a, b);
    EXPECT_EQ(leak_signature_id(a), leak_signature_id(b));
    EXPECT_EQ(leak_signature_id(a).size(), 16u);
    EXPECT_EQ(a,
              "object of java.util.ArrayList | accumulates in java.lang.Object[] | sticky_class: class "
              "Sessions.LEAK → java.util.ArrayList.elementData → java.lang.Object[].[] → Sessions$Session.next → "
              "Sessions$Session");
    // Another class on the path is another leak.
    EXPECT_NE(leak_signature_id(a), leak_signature_id(leak_signature(list_leak(0x1000, 1, 3, 1, "Orders$Order"))));
}

TEST(leak_signature, names_made_at_run_time_are_the_same_in_every_jvm) {
    EXPECT_EQ(stable_class_name("app.Cache$$Lambda$14/0x0000000800c0b000"), "app.Cache$$Lambda*");
    EXPECT_EQ(stable_class_name("app.Cache$$Lambda/0x000071c3f4001234"), "app.Cache$$Lambda*");
    EXPECT_EQ(stable_class_name("app.Cache$$Lambda$15/0x0000000800c0c400[]"), "app.Cache$$Lambda*[]");
    EXPECT_EQ(stable_class_name("jdk.proxy2.$Proxy12"), "jdk.proxy*.$Proxy*");
    EXPECT_EQ(stable_class_name("com.sun.proxy.$Proxy7"), "com.sun.proxy.$Proxy*");
    EXPECT_EQ(stable_class_name("jdk.internal.reflect.GeneratedMethodAccessor231"),
              "jdk.internal.reflect.GeneratedMethodAccessor*");
    EXPECT_EQ(stable_class_name("app.Repo$$EnhancerBySpringCGLIB$$5e1a2b3c"), "app.Repo$$EnhancerBySpringCGLIB$$*");
    EXPECT_EQ(stable_class_name("app.Order$HibernateProxy$xY12ab"), "app.Order$HibernateProxy$*");
    EXPECT_EQ(stable_class_name("app.Outer$1"), "app.Outer$1");  // compiled in: the same everywhere
    EXPECT_EQ(stable_class_name("java.util.HashMap$Node[]"), "java.util.HashMap$Node[]");
}

TEST(fleet_view, one_leak_on_many_hosts_is_one_finding_with_its_hosts_times_and_growth) {
    const std::int64_t t0 = 1'790'000'000'000;
    std::vector<fleet_entry> all = {
        entry("web-1", "OrderService", 100, t0, {list_leak(0x1000, 200u << 20, 1, 10)}),
        entry("web-1", "OrderService", 100, t0 + 3'600'000, {list_leak(0x9000, 300u << 20, 7, 500)}, "oom"),
        entry("web-2", "OrderService", 200, t0 + 60'000, {list_leak(0x5000, 150u << 20, 2, 3)}),
        entry("web-3", "Billing", 300, t0 + 120'000, {list_leak(0x5000, 80u << 20, 2, 3, "Billing$Invoice")}),
        entry("web-3", "Healthy", 400, t0 + 180'000, {}),
    };
    const fleet_view v = build_fleet_view(all, {});
    EXPECT_EQ(v.reports, 5u);
    EXPECT_EQ(v.oom_reports, 1u);
    EXPECT_EQ(v.without_suspect, 1u);
    EXPECT_EQ(v.hosts, (std::vector<std::string>{"web-1", "web-2", "web-3"}));
    ASSERT_EQ(v.findings.size(), 2u);
    const fleet_finding& f = v.findings[0];
    EXPECT_EQ(f.class_name, "java.util.ArrayList");
    EXPECT_EQ(f.services, std::vector<std::string>{"OrderService"});
    ASSERT_EQ(f.hosts.size(), 2u);
    EXPECT_EQ(f.hosts[0], (std::pair<std::string, std::uint64_t>{"web-1", 2}));
    EXPECT_EQ(f.hosts[1], (std::pair<std::string, std::uint64_t>{"web-2", 1}));
    EXPECT_EQ(f.reports, 3u);
    EXPECT_EQ(f.oom_reports, 1u);
    EXPECT_EQ(f.first_ms, t0);
    EXPECT_EQ(f.last_ms, t0 + 3'600'000);
    EXPECT_EQ(f.min_bytes, 150u << 20);
    EXPECT_EQ(f.max_bytes, 300u << 20);
    ASSERT_EQ(f.jvms.size(), 2u);
    EXPECT_EQ(f.jvms[0].host, "web-1");  // the one that grew, first
    EXPECT_EQ(f.jvms[0].reports, 2u);
    EXPECT_DOUBLE_EQ(f.jvms[0].bytes_per_hour(), static_cast<double>(100u << 20));
    EXPECT_EQ(f.jvms[1].bytes_per_hour(), 0);
    ASSERT_EQ(f.sightings.size(), 3u);
    EXPECT_EQ(f.sightings[0].time_ms, t0 + 3'600'000);  // newest first
    EXPECT_EQ(v.findings[1].services, std::vector<std::string>{"Billing"});
    // The services and their timelines.
    ASSERT_EQ(v.services.size(), 3u);
    EXPECT_EQ(v.services[0].name, "OrderService");
    EXPECT_EQ(v.services[0].points.size(), 3u);
    EXPECT_EQ(v.services[0].points[0].time_ms, t0);
    EXPECT_EQ(v.services[0].points[0].finding, f.signature);
}

TEST(fleet_view, filters_by_time_service_and_size) {
    const std::int64_t t0 = 1'790'000'000'000;
    std::vector<fleet_entry> all = {
        entry("a", "S1", 1, t0, {list_leak(0x1000, 5u << 20, 1, 1)}),
        entry("b", "S1", 2, t0 + 1000, {list_leak(0x1000, 500u << 10, 1, 1)}),
        entry("c", "S2", 3, t0 + 2000, {list_leak(0x1000, 5u << 20, 1, 1, "X")}),
    };
    fleet_filter since;
    since.since_ms = t0 + 1000;
    EXPECT_EQ(build_fleet_view(all, since).reports, 2u);
    fleet_filter service;
    service.service = "S2";
    EXPECT_EQ(build_fleet_view(all, service).reports, 1u);
    // The default leaves out suspects under 1 MiB: b counts as a report without one.
    const fleet_view v = build_fleet_view(all, {});
    EXPECT_EQ(v.without_suspect, 1u);
    ASSERT_EQ(v.findings.size(), 2u);
    EXPECT_EQ(v.findings[0].reports, 1u);
    fleet_filter all_sizes;
    all_sizes.min_retained = 0;
    EXPECT_EQ(build_fleet_view(all, all_sizes).findings[0].reports, 2u);
}

TEST(fleet_view, a_report_without_a_pid_is_a_jvm_of_its_own) {
    std::vector<fleet_entry> all = {entry("a", "S", 0, 1000, {list_leak(1, 5u << 20, 1, 1)}),
                                    entry("a", "S", 0, 2000, {list_leak(1, 9u << 20, 1, 1)})};
    const fleet_view v = build_fleet_view(all, {});
    ASSERT_EQ(v.findings.size(), 1u);
    EXPECT_EQ(v.findings[0].jvms.size(), 2u);
}

TEST(fleet_entry, its_json_reads_back_and_bad_json_is_refused_by_name) {
    const fleet_entry e = entry("web-1", "OrderService", 100, 1234, {list_leak(0x1000, 200u << 20, 1, 10)}, "oom");
    auto back = fleet_entry_from_json(nlohmann::ordered_json::parse(to_json(e).dump()));
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(to_json(*back), to_json(e));
    EXPECT_EQ(back->suspects.at(0).retained_bytes, 200u << 20);
    auto j = to_json(e);
    j["suspects"][0].erase("retained_bytes");
    auto bad = fleet_entry_from_json(j);
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("retained_bytes"), std::string::npos) << bad.error().message;
    j = to_json(e);
    j["host"] = std::string(10000, 'h');  // bounded
    EXPECT_EQ(fleet_entry_from_json(j)->host.size(), 4096u);
    std::string wide;
    for (int i = 0; i < 3000; ++i) wide += "\xc3\xa9";  // é: two bytes, so 4096 would cut one in half
    j["host"] = wide;
    EXPECT_EQ(fleet_entry_from_json(j)->host.size(), 4096u);
    j["host"] = "x" + wide;
    const std::string cut = fleet_entry_from_json(j)->host;
    EXPECT_EQ(cut.size(), 4095u);
    EXPECT_NO_THROW((void)nlohmann::ordered_json(cut).dump());
    j["time_ms"] = std::numeric_limits<std::int64_t>::max();  // held to the year 9999
    EXPECT_EQ(fleet_entry_from_json(j)->time_ms, 253'402'300'799'999);
    // A whole field written as a float (beyond 2^63 its conversion would be undefined) is refused.
    j["time_ms"] = 1.44e81;
    auto floated = fleet_entry_from_json(j);
    ASSERT_FALSE(floated);
    EXPECT_NE(floated.error().message.find("time_ms"), std::string::npos) << floated.error().message;
}

// A report's JSON with one leak suspect, as a report from elsewhere is read.
nlohmann::ordered_json one_leak_report() {
    analysis_report r;
    r.retention.computed = true;
    r.retention.leak_suspects = {list_leak(0x1000, 200u << 20, 1, 10)};
    return to_json(r);
}

fleet_context place(const std::string& key) {
    fleet_context c;
    c.key = key;
    return c;
}

TEST(fleet_entry, a_report_from_elsewhere_with_a_number_out_of_range_is_refused) {
    const fleet_context c = place("prod/h/S/1");
    auto j = one_leak_report();
    ASSERT_TRUE(fleet_entry_of_report(j.dump(), c));
    ASSERT_TRUE(j.at("leak_suspects").at("suspects").at(0).contains("retained_bytes")) << j.dump();
    j["leak_suspects"]["suspects"][0]["retained_bytes"] = 3.5e30;
    auto bad = fleet_entry_of_report(j.dump(), c);
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().code, error_code::bad_value);
}

// A report.json without a summary is read for the few sections an entry needs: anything else in it,
// however big, is dropped as it is parsed, and what is kept is bounded.
TEST(fleet_entry, a_report_from_elsewhere_keeps_only_what_an_entry_needs_and_within_a_bound) {
    const fleet_context c = place("prod/h/S/1");
    auto j = one_leak_report();
    std::string filler = "[";
    for (int i = 0; i < 400'000; ++i) filler += i == 0 ? "{}" : ",{}";
    filler += "]";
    // 400,000 objects in sections an entry does not read: dropped as they come.
    std::string text = j.dump();
    ASSERT_EQ(text.back(), '}');
    text.pop_back();
    text += ",\"histogram\":" + filler + ",\"padding\":" + filler + "}";
    const std::string histogram = "\"histogram\":" + j.at("histogram").dump() + ",";
    ASSERT_NE(text.find(histogram), std::string::npos);
    text.erase(text.find(histogram), histogram.size());
    auto e = fleet_entry_of_report(text, c);
    ASSERT_TRUE(e) << e.error().message;
    ASSERT_EQ(e->suspects.size(), 1u);
    // The same objects in a section it reads: refused past the bound.
    auto flooded = j;
    flooded["leak_suspects"]["padding"] = nlohmann::ordered_json::parse(filler);
    auto refused = fleet_entry_of_report(flooded.dump(), c);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("more than 20000 values"), std::string::npos) << refused.error().message;
    EXPECT_FALSE(fleet_entry_of_report("{not json", c));
}

// A summary from the bucket is read by anyone's heapd fleet: a signature that is not what heapd
// makes (16 hex digits) is refused, and whatever the view prints stays on its line, escapes and
// forged log lines included.
TEST(fleet_entry, a_signature_that_is_not_what_heapd_makes_is_refused) {
    const std::string hostile = "\x1b]2;owned\x07\x1b[2J\r\nheapd[1] info: forged line";
    auto j = to_json(entry("web-1", "S", 1, 1000, {list_leak(1, 5u << 20, 1, 1)}));
    ASSERT_TRUE(fleet_entry_from_json(j).has_value());
    j["suspects"][0]["signature"] = hostile;
    auto refused = fleet_entry_from_json(j);
    ASSERT_FALSE(refused.has_value());
    EXPECT_NE(refused.error().message.find("signature"), std::string::npos) << refused.error().message;
    j["suspects"][0]["signature"] = "7E984D24B22BD7FB";  // upper case is not what heapd writes either
    EXPECT_FALSE(fleet_entry_from_json(j).has_value());
}

TEST(fleet_view, a_hostile_signature_stays_on_its_line_in_the_text) {
    fleet_entry e = entry("web-1", "S", 1, 1000, {list_leak(1, 5u << 20, 1, 1)});
    ASSERT_FALSE(e.suspects.empty());
    e.suspects[0].signature = "\x1b]2;owned\x07\x1b[2J\r\nheapd[1] info: forged line";
    const std::string text = render_text(build_fleet_view({e}, {}), 10);
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
    EXPECT_EQ(text.find('\r'), std::string::npos) << text;
    EXPECT_EQ(text.find("\nheapd[1]"), std::string::npos) << text;
    EXPECT_NE(text.find("forged line"), std::string::npos) << text;
}

TEST(fleet_html, names_from_the_bucket_are_escaped_and_every_report_links_to_its_page) {
    std::vector<fleet_entry> all = {entry("<script>alert(1)</script>", "S", 1, 1000, {list_leak(1, 5u << 20, 1, 1)}),
                                    entry("b", "S", 2, 2000, {})};
    const fleet_view v = build_fleet_view(all, {});
    fleet_page page;
    page.source = "s3://bucket/prod";
    for (const fleet_entry& e : all) page.links[e.key] = "https://reports.example/" + e.key + "/report.html";
    const std::string html = render_fleet_html(v, page);
    EXPECT_EQ(html.find("<script>alert"), std::string::npos);
    EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
    EXPECT_NE(html.find("href=\"https://reports.example/prod/b/S/2000/report.html\""), std::string::npos);
    EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
}

}  // namespace
}  // namespace heapd
