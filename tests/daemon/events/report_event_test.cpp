// The journal entry of a kept report: heapd's MESSAGE_ID, the fields a fleet selects on, valid
// field names, and names from the dump that cannot forge a line or a field.
#include "daemon/events/report_event.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>

namespace heapd::daemon {
namespace {

std::map<std::string, std::string> by_name(const std::vector<std::string>& fields) {
    std::map<std::string, std::string> m;
    for (const std::string& f : fields) {
        const auto eq = f.find('=');
        EXPECT_NE(eq, std::string::npos) << f;
        EXPECT_TRUE(m.emplace(f.substr(0, eq), f.substr(eq + 1)).second) << "twice: " << f;
    }
    return m;
}

entry_metadata oom_entry() {
    entry_metadata meta;
    meta.id = "20261126T160000-7";
    meta.job = 7;
    meta.trigger = "oom";
    meta.source = "dump";
    meta.host = "web-17";
    meta.pid = 4242;
    meta.command_line = "com.example.OrdersMain --port 8080";
    meta.jvm = "17.0.15+6-Debian-1deb12u1";
    meta.file_bytes = 70'000'000;
    meta.headline = "leak suspect: 60.8 MiB (98.5%) in 3,860 java.util.HashMap$Node, held by java.util.HashMap";
    return meta;
}

analysis_report leaking_report() {
    analysis_report r;
    r.summary.shallow_bytes = 64'700'000;
    r.summary.instances = 30'000;
    r.summary.object_arrays = 3'000;
    r.summary.primitive_arrays = 426;
    r.retention.computed = true;
    r.retention.reachable_bytes = 64'600'000;
    leak_suspect s;
    s.suspect.class_name = "java.util.HashMap";
    s.retained_bytes = 63'700'000;
    s.share = 0.985;
    r.retention.leak_suspects.push_back(s);
    return r;
}

TEST(report_event, main_class_is_the_commands_first_word) {
    EXPECT_EQ(main_class_of_command("com.example.OrdersMain --port 8080"), "com.example.OrdersMain");
    EXPECT_EQ(main_class_of_command("  /opt/app/app.jar\tserve"), "/opt/app/app.jar");
    EXPECT_EQ(main_class_of_command("OomExit"), "OomExit");
    EXPECT_EQ(main_class_of_command(""), "");
    EXPECT_EQ(main_class_of_command("   "), "");
}

TEST(report_event, an_oom_dump_with_a_suspect_carries_every_field_at_warning) {
    const auto f = by_name(journal_fields(make_report_event(oom_entry(), leaking_report())));
    EXPECT_EQ(f.at("MESSAGE_ID"), "838bc2aa119b48cfa35c7c425bf5fb0b");
    EXPECT_EQ(f.at("PRIORITY"), "4");
    EXPECT_EQ(f.at("HEAPD_DUMP_ID"), "20261126T160000-7");
    EXPECT_EQ(f.at("HEAPD_JOB"), "7");
    EXPECT_EQ(f.at("HEAPD_TRIGGER"), "oom");
    EXPECT_EQ(f.at("HEAPD_SOURCE"), "dump");
    EXPECT_EQ(f.at("HEAPD_HOST"), "web-17");
    EXPECT_EQ(f.at("HEAPD_PID"), "4242");
    EXPECT_EQ(f.at("HEAPD_MAIN_CLASS"), "com.example.OrdersMain");
    EXPECT_EQ(f.at("HEAPD_JVM_VERSION"), "17.0.15+6-Debian-1deb12u1");
    EXPECT_EQ(f.at("HEAPD_DUMP_BYTES"), "70000000");
    EXPECT_EQ(f.at("HEAPD_HEAP_BYTES"), "64700000");
    EXPECT_EQ(f.at("HEAPD_OBJECTS"), "33426");
    EXPECT_EQ(f.at("HEAPD_REACHABLE_BYTES"), "64600000");
    EXPECT_EQ(f.at("HEAPD_SUSPECT_CLASS"), "java.util.HashMap");
    EXPECT_EQ(f.at("HEAPD_SUSPECT_RETAINED_BYTES"), "63700000");
    EXPECT_EQ(f.at("HEAPD_SUSPECT_PERCENT"), "98.5");
    EXPECT_EQ(f.at("MESSAGE"),
              "OutOfMemoryError: dump 20261126T160000-7 of pid 4242 (com.example.OrdersMain), trigger \"oom\", heap "
              "61.7 MiB: leak suspect: 60.8 MiB (98.5%) in 3,860 java.util.HashMap$Node, held by java.util.HashMap");
}

TEST(report_event, a_jvm_in_a_kubernetes_pod_is_named_by_its_container_pod_and_namespace) {
    entry_metadata meta = oom_entry();
    meta.container = {{"runtime", "containerd"},
                      {"name", "app"},
                      {"pod", "orders-7d9c5b8f6d-x2kq9"},
                      {"namespace", "shop"},
                      {"label", "shop/orders-7d9c5b8f6d-x2kq9/app\nMESSAGE=forged"}};
    const auto fields = journal_fields(make_report_event(meta, leaking_report()));
    for (const std::string& field : fields) EXPECT_EQ(field.find('\n'), std::string::npos) << field;
    const auto f = by_name(fields);
    EXPECT_EQ(f.at("HEAPD_POD"), "orders-7d9c5b8f6d-x2kq9");
    EXPECT_EQ(f.at("HEAPD_NAMESPACE"), "shop");
    EXPECT_EQ(f.at("HEAPD_CONTAINER").rfind("shop/orders-7d9c5b8f6d-x2kq9/app", 0), 0u);
    EXPECT_NE(f.at("MESSAGE").find("(com.example.OrdersMain) in container shop/orders-7d9c5b8f6d-x2kq9/app"),
              std::string::npos)
        << f.at("MESSAGE");
    // On the host: none of them.
    const auto host = by_name(journal_fields(make_report_event(oom_entry(), leaking_report())));
    EXPECT_EQ(host.count("HEAPD_CONTAINER") + host.count("HEAPD_POD") + host.count("HEAPD_NAMESPACE"), 0u);
}

TEST(report_event, a_requested_report_without_suspect_is_a_notice_without_suspect_fields) {
    entry_metadata meta = oom_entry();
    meta.trigger = "request";
    analysis_report r = leaking_report();
    r.retention.leak_suspects.clear();
    const auto f = by_name(journal_fields(make_report_event(meta, r)));
    EXPECT_EQ(f.at("PRIORITY"), "5");
    EXPECT_EQ(f.count("HEAPD_SUSPECT_CLASS"), 0u);
    EXPECT_EQ(f.count("HEAPD_SUSPECT_PERCENT"), 0u);
    EXPECT_EQ(f.at("MESSAGE").rfind("report of dump ", 0), 0u) << f.at("MESSAGE");
}

TEST(report_event, a_file_analyzed_in_place_has_no_pid_and_takes_the_dumps_version) {
    entry_metadata meta;
    meta.id = "x-1";
    meta.trigger = "heapctl report";
    meta.source = "file";
    analysis_report r;
    r.summary.java_version = "11.0.2+9";
    const auto f = by_name(journal_fields(make_report_event(meta, r)));
    EXPECT_EQ(f.count("HEAPD_PID"), 0u);
    EXPECT_EQ(f.count("HEAPD_MAIN_CLASS"), 0u);
    EXPECT_EQ(f.count("HEAPD_REACHABLE_BYTES"), 0u);
    EXPECT_EQ(f.at("HEAPD_JVM_VERSION"), "11.0.2+9");
    EXPECT_NE(f.at("MESSAGE").find("of a file"), std::string::npos) << f.at("MESSAGE");
}

TEST(report_event, names_from_the_dump_cannot_forge_lines_or_fields_and_are_bounded) {
    entry_metadata meta = oom_entry();
    meta.command_line = "Evil\nHEAPD_TRIGGER=request\x1b[2J" + std::string(5000, 'A');
    analysis_report r = leaking_report();
    r.retention.leak_suspects.front().suspect.class_name = "x\nPRIORITY=7\r\x07" + std::string(5000, 'B');
    const auto fields = journal_fields(make_report_event(meta, r));
    const std::regex name("^[A-Z][A-Z0-9_]*=");
    for (const std::string& f : fields) {
        EXPECT_TRUE(std::regex_search(f, name)) << f;
        EXPECT_EQ(f.find_first_of("\n\r\x1b\x07"), std::string::npos) << f;
        EXPECT_LT(f.size(), 2048u) << f.substr(0, 80);
    }
    const auto f = by_name(fields);
    EXPECT_EQ(f.at("HEAPD_TRIGGER"), "oom");
    EXPECT_EQ(f.at("PRIORITY"), "4");
    EXPECT_EQ(f.at("HEAPD_SUSPECT_CLASS").rfind("x\\nPRIORITY=7\\r\\x07BBB", 0), 0u) << f.at("HEAPD_SUSPECT_CLASS");
}

}  // namespace
}  // namespace heapd::daemon
