// Dump rules' selectors: main class globs, command patterns in the JVM arguments and command,
// users by name or uid, containers; every condition given must hold.
#include "daemon/rules/rule_match.h"

#include <gtest/gtest.h>

namespace heapd::daemon {
namespace {

struct subject {
    attach::discovered_jvm jvm;
    jvm_perf_summary summary;
    std::string user = "alice";
    subject() {
        jvm.pid = 100;
        jvm.uid = 1000;
        summary.main_class = "com.example.shop.OrderService";
        summary.command = "com.example.shop.OrderService --port 8080";
        summary.vm_args = "-Xmx2g -XX:+UseG1GC -Dapp.env=prod";
    }
    bool picked_by(const jvm_selector& s) const { return selects(s, jvm, summary, user); }
};

jvm_selector with_command(const std::string& pattern) {
    jvm_selector s;
    s.command = pattern;
    s.command_re = std::regex(pattern, std::regex::ECMAScript);
    return s;
}

TEST(rule_match, an_empty_selector_picks_every_jvm) {
    subject j;
    EXPECT_TRUE(j.picked_by({}));
}

TEST(rule_match, main_class_is_a_glob_on_the_whole_name) {
    subject j;
    jvm_selector s;
    for (const char* yes : {"com.example.shop.OrderService", "com.example.*", "*OrderService", "*.shop.Order?ervice",
                            "com.example.[sx]hop.*"}) {
        s.main_class = yes;
        EXPECT_TRUE(j.picked_by(s)) << yes;
    }
    for (const char* no : {"OrderService", "com.example", "*Billing*", "com.example.shop.OrderService2"}) {
        s.main_class = no;
        EXPECT_FALSE(j.picked_by(s)) << no;
    }
    // A jar as jps -l shows it: * also matches '/'.
    j.summary.main_class = "/opt/shop/lib/orders.jar";
    s.main_class = "*orders.jar";
    EXPECT_TRUE(j.picked_by(s));
}

TEST(rule_match, command_is_searched_in_the_jvm_arguments_and_the_command) {
    subject j;
    EXPECT_TRUE(j.picked_by(with_command("--port 80[0-9]0")));
    EXPECT_TRUE(j.picked_by(with_command("-Dapp\\.env=prod")));
    EXPECT_TRUE(j.picked_by(with_command("^-Xmx2g")));
    EXPECT_TRUE(j.picked_by(with_command("UseG1GC.*OrderService")));  // across the two
    EXPECT_FALSE(j.picked_by(with_command("-Dapp\\.env=staging")));
    EXPECT_FALSE(j.picked_by(with_command("^com\\.example")));  // the arguments come first
}

TEST(rule_match, a_command_not_compiled_is_compiled_and_a_bad_one_matches_nothing) {
    subject j;
    jvm_selector s;
    s.command = "OrderService --port";
    EXPECT_TRUE(j.picked_by(s));
    s.command = "(unclosed";
    EXPECT_FALSE(j.picked_by(s));
}

TEST(rule_match, user_by_name_or_uid) {
    subject j;
    jvm_selector s;
    s.user = "alice";
    EXPECT_TRUE(j.picked_by(s));
    s.user = "1000";
    EXPECT_TRUE(j.picked_by(s));
    s.user = "bob";
    EXPECT_FALSE(j.picked_by(s));
    s.user = "1001";
    EXPECT_FALSE(j.picked_by(s));
    j.user = "";  // a uid without a name
    s.user = "alice";
    EXPECT_FALSE(j.picked_by(s));
    s.user = "1000";
    EXPECT_TRUE(j.picked_by(s));
}

TEST(rule_match, user_names_come_from_the_user_database) {
    EXPECT_EQ(user_name_of(0), "root");
    EXPECT_EQ(user_name_of(static_cast<uid_t>(4000000000u)), "");
}

TEST(rule_match, container_or_host) {
    subject j;
    jvm_selector s;
    s.container = true;
    EXPECT_FALSE(j.picked_by(s));
    s.container = false;
    EXPECT_TRUE(j.picked_by(s));
    j.jvm.in_container = true;
    EXPECT_FALSE(j.picked_by(s));
    s.container = true;
    EXPECT_TRUE(j.picked_by(s));
}

TEST(rule_match, a_jvm_on_the_host_has_no_container_pod_or_namespace_to_match) {
    // Real containers' names are matched in tests/e2e/zero_touch_test.cpp.
    subject j;
    for (auto field : {&jvm_selector::container_name, &jvm_selector::pod, &jvm_selector::pod_namespace}) {
        jvm_selector s;
        s.*field = "*";
        EXPECT_FALSE(j.picked_by(s));
    }
}

TEST(rule_match, every_condition_given_must_hold) {
    subject j;
    jvm_selector s = with_command("--port 8080");
    s.main_class = "com.example.*";
    s.user = "alice";
    s.container = false;
    EXPECT_TRUE(j.picked_by(s));
    s.user = "bob";
    EXPECT_FALSE(j.picked_by(s));
    s.user = "alice";
    s.main_class = "org.*";
    EXPECT_FALSE(j.picked_by(s));
}

}  // namespace
}  // namespace heapd::daemon
