// The uploader's pieces without a server: keys a fleet can list and nobody can steer out of their
// place, the credentials file, the progress kept across restarts.
#include "daemon/upload/uploader.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <fstream>

#include "support/jvm_process.h"

namespace heapd::daemon {
namespace {

TEST(uploader, key_segments_are_plain_names) {
    EXPECT_EQ(key_segment("web-17.example.com"), "web-17.example.com");
    EXPECT_EQ(key_segment("com.example.Main$Inner"), "com.example.Main_Inner");
    EXPECT_EQ(key_segment("../../etc/passwd"), ".._.._etc_passwd");
    EXPECT_EQ(key_segment(".."), "_");
    EXPECT_EQ(key_segment("."), "_");
    EXPECT_EQ(key_segment(""), "unknown");
    EXPECT_EQ(key_segment("a\nb c\x01"), "a_b_c_");
    EXPECT_EQ(key_segment(std::string(500, 'x')).size(), 128u);
}

TEST(uploader, an_entrys_keys_name_host_main_class_and_dump) {
    entry_metadata m;
    m.id = "20261126T160000-7";
    m.host = "web-17";
    m.command_line = "com.example.OrdersMain --port 8080";
    EXPECT_EQ(entry_key_base("fleet/prod", m), "fleet/prod/web-17/com.example.OrdersMain/20261126T160000-7");
    m.command_line = "/opt/orders/orders-1.4.jar serve";
    EXPECT_EQ(entry_key_base("", m), "web-17/orders-1.4.jar/20261126T160000-7");
    m.command_line = "";
    m.host = "";
    EXPECT_EQ(entry_key_base("p", m), "p/unknown/unknown/20261126T160000-7");
    m.command_line = "../../../x y";
    EXPECT_EQ(entry_key_base("p", m), "p/unknown/x/20261126T160000-7");
    // A JVM's death record lies where its reports do, a jar's too; without a prefix, no leading '/'.
    EXPECT_EQ(key_base("", "web-17", "/opt/orders/orders-1.4.jar", "20261126T160001-death-7"),
              "web-17/orders-1.4.jar/20261126T160001-death-7");
    EXPECT_EQ(key_base("fleet", "web-17", "com.example.OrdersMain", "d"), "fleet/web-17/com.example.OrdersMain/d");
    EXPECT_EQ(key_base("fleet", "web-17", "", "d"), "fleet/web-17/unknown/d");
}

TEST(uploader, a_jvm_in_a_container_is_keyed_by_its_workload_not_its_launcher) {
    // Every Spring Boot fat jar's main class is the same launcher: the pod's workload tells them apart.
    entry_metadata m;
    m.id = "20261126T160000-7";
    m.host = "node-3";
    m.command_line = "org.springframework.boot.loader.JarLauncher";
    m.container = {{"pod", "checkout-7d9c5b8f6d-x2kq9"},
                   {"workload", "checkout"},
                   {"label", "shop/checkout-7d9c5b8f6d-x2kq9/app"}};
    EXPECT_EQ(entry_key_base("fleet", m), "fleet/node-3/checkout/20261126T160000-7");
    EXPECT_EQ(key_base("fleet", "node-3", "JarLauncher", "d", {{"workload", "../billing api"}}),
              "fleet/node-3/.._billing_api/d");
    m.container = {{"workload", ""}};
    EXPECT_EQ(entry_key_base("", m), "node-3/org.springframework.boot.loader.JarLauncher/20261126T160000-7");
}

TEST(uploader, credentials_in_either_form_and_only_from_a_private_file) {
    test::scratch_dir dir;
    const std::string one = dir.file("one"), aws = dir.file("aws");
    std::ofstream(one) << "AKIDEXAMPLE:wJalrXUtnFEMI/K7MDENG\n";
    std::ofstream(aws) << "[default]\naws_access_key_id = AKID2\naws_secret_access_key = s3cr=t\n";
    ::chmod(one.c_str(), 0600);
    ::chmod(aws.c_str(), 0600);
    auto a = read_credentials(one);
    ASSERT_TRUE(a) << a.error().describe();
    EXPECT_EQ(a->first, "AKIDEXAMPLE");
    EXPECT_EQ(a->second, "wJalrXUtnFEMI/K7MDENG");
    auto b = read_credentials(aws);
    ASSERT_TRUE(b) << b.error().describe();
    EXPECT_EQ(b->first, "AKID2");
    EXPECT_EQ(b->second, "s3cr=t");
    ::chmod(one.c_str(), 0644);
    auto readable = read_credentials(one);
    ASSERT_FALSE(readable);
    EXPECT_NE(readable.error().describe().find("chmod 600"), std::string::npos);
    std::ofstream(dir.file("empty")) << "# nothing\n";
    ::chmod(dir.file("empty").c_str(), 0600);
    EXPECT_FALSE(read_credentials(dir.file("empty")));
    ::symlink(aws.c_str(), dir.file("link").c_str());
    EXPECT_FALSE(read_credentials(dir.file("link")));  // never through a link
}

TEST(uploader, progress_is_kept_across_restarts_and_forgotten_with_its_entry) {
    test::scratch_dir dir;
    auto state = upload_state::open(dir.file("state"));
    ASSERT_TRUE(state) << state.error().describe();
    entry_progress p;
    p.dump_id = "20261126T160000-7";
    p.key_base = "fleet/h/M/20261126T160000-7";
    p.file("report.json").done = true;
    file_progress& dump = p.file("dump.hprof.gz");
    dump.size = 123456789;
    dump.upload_id = "2~abc+/=";
    dump.parts = {{1, "\"e1\""}, {2, "\"e2\""}};
    p.attempts = 2;
    p.next_attempt_ms = 42;
    p.last_error = "HTTP 503 SlowDown: later";
    ASSERT_TRUE(state->save(p));
    std::ofstream(state->work_path(p.dump_id, "dump.hprof.gz")) << "x";

    auto again = upload_state::open(dir.file("state"));
    ASSERT_TRUE(again);
    auto back = again->load(p.dump_id);
    ASSERT_TRUE(back);
    EXPECT_EQ(to_json(*back), to_json(p));
    EXPECT_EQ(again->pending(), std::vector<std::string>{p.dump_id});
    EXPECT_FALSE(again->is_done(p.dump_id));
    ASSERT_TRUE(again->mark_done(p.dump_id));
    EXPECT_TRUE(again->is_done(p.dump_id));
    EXPECT_TRUE(again->pending().empty());
    EXPECT_FALSE(std::filesystem::exists(again->work_path(p.dump_id, "dump.hprof.gz")));
    struct stat st {};
    ASSERT_EQ(::stat(dir.file("state").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST(uploader, a_state_directory_given_as_a_link_is_followed_once) {
    // What systemd makes for StateDirectory= with DynamicUser=: /var/lib/NAME -> private/NAME.
    test::scratch_dir dir;
    std::filesystem::create_directories(dir.file("private/heapd-upload"));
    ASSERT_EQ(::symlink("private/heapd-upload", dir.file("heapd-upload").c_str()), 0);
    auto state = upload_state::open(dir.file("heapd-upload"));
    ASSERT_TRUE(state) << state.error().describe();
    entry_progress p;
    p.dump_id = "x-1";
    ASSERT_TRUE(state->save(p));
    EXPECT_TRUE(std::filesystem::exists(dir.file("private/heapd-upload/pending/x-1.json")));
}

}  // namespace
}  // namespace heapd::daemon
