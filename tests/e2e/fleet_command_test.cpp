// `heapd fleet` over a bucket that hosts filled: each host a real daemon in its own UTS namespace (its
// own host name) dumping real JVMs (two leaks, one healthy JVM), each report put in the S3 test server
// by `heapd upload`. The same leak on two hosts is one finding, the leak that grew in one JVM shows its
// growth, the healthy JVM is no finding; a later upload is read alone, the rest from the index; the
// page shows the findings, a timeline and links, and loads nothing from anywhere.
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "daemon/upload/s3_client.h"
#include "formats/report/fleet_entry.h"
#include "formats/wire/protocol.h"
#include "support/headless_browser.h"
#include "support/jvm_process.h"
#include "support/s3_test_server.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

using wire::json;

// A host of the fleet: a daemon named host (its own UTS namespace), and the config its uploader reads.
struct fleet_host {
    std::string name;
    serve_process daemon;
    scratch_dir dir;
    std::string config;

    fleet_host(std::string host, const s3_test_server& server)
        : name(host), daemon({}, {"unshare", "--uts", "sh", "-c", "hostname \"$0\" && exec \"$@\"", host}) {
        std::ofstream(dir.file("credentials")) << "S3RVER:S3RVER\n";
        ::chmod(dir.file("credentials").c_str(), 0600);
        config = dir.file("heapd.toml");
        std::ofstream(config) << "[daemon]\nstore = \"" << daemon.store() << "\"\n[upload]\nendpoint = \""
                              << server.endpoint() << "\"\nbucket = \"heapd-test\"\nprefix = \"prod\"\n"
                              << "credentials_file = \"" << dir.file("credentials") << "\"\nstate = \""
                              << dir.file("state") << "\"\ndeaths = false\n";
    }
    // A dump of pid through this host's daemon.
    void dump(pid_t pid) {
        auto r = run_heapctl(daemon, {"dump", std::to_string(pid), "--wait"});
        ASSERT_EQ(r.exit_code, 0) << r.err << daemon.log();
    }
    void upload() {
        auto r = run_command({heapd_binary(), "upload", "--config", config, "--once"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }
};

// heapd fleet over the bucket, as JSON.
json fleet(const fleet_host& any, const std::string& index, std::vector<std::string> more = {}) {
    std::vector<std::string> argv = {heapd_binary(), "fleet", "--config", any.config, "--index", index, "--json"};
    argv.insert(argv.end(), more.begin(), more.end());
    auto r = run_command(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out, nullptr, false);
}

// The finding whose path passes through text, or null.
json finding_through(const json& view, const std::string& text) {
    for (const json& f : view["findings"])
        if (f["path"].get<std::string>().find(text) != std::string::npos) return f;
    return nullptr;
}

std::vector<std::string> hosts_of(const json& finding) {
    std::vector<std::string> out;
    for (const json& h : finding["hosts"]) out.push_back(h["host"]);
    return out;
}

// `heapd analyze --json` of a real JVM's dump with a leak (tests/java/Sessions.java), made in scratch.
command_result sessions_report(const scratch_dir& scratch) {
    demo_jvm jvm(java_main{"Sessions"}, {"-Xmx256m"}, {"20000"});
    if (!jvm.ready()) return {1, "", "the JVM did not start"};
    auto dumped = jvm.jcmd({"GC.heap_dump", scratch.file("s.hprof")});
    if (dumped.exit_code != 0) return dumped;
    return run_command({heapd_binary(), "analyze", "--json", "--no-index", scratch.file("s.hprof")});
}

TEST(fleet_command, one_leak_on_two_hosts_is_one_finding_and_a_new_report_is_read_alone) {
    ASSERT_FALSE(s3_test_server::s3rver_module().empty()) << "s3rver is not installed: run .ci/setup";
    scratch_dir scratch;
    s3_test_server server(scratch.file("s3"), "heapd-test", "S3RVER");
    ASSERT_TRUE(server.start()) << server.refusals();
    fleet_host web1("web-1", server), web2("web-2", server);
    ASSERT_TRUE(web1.daemon.ready()) << web1.daemon.log();
    ASSERT_TRUE(web2.daemon.ready()) << web2.daemon.log();
    {
        // The session leak on both hosts; the list leak on web-1, dumped before and after it grew;
        // a healthy JVM on web-2.
        demo_jvm sessions1(java_main{"Sessions"}, {"-Xmx256m"}, {"20000"});
        demo_jvm sessions2(java_main{"Sessions"}, {"-Xmx256m"}, {"30000"});
        demo_jvm leaky(java_main{"Leaky"}, {"-Xmx256m"}, {scratch.file("grow"), "100000"});
        demo_jvm healthy(java_main{"AttachTarget"}, {"-Xmx64m"}, {});
        ASSERT_TRUE(sessions1.ready() && sessions2.ready() && leaky.ready() && healthy.ready());
        web1.dump(sessions1.pid());
        web2.dump(sessions2.pid());
        web2.dump(healthy.pid());
        for (int round = 0; round < 2; ++round) {
            std::ofstream(scratch.file("grow")) << "grow";
            for (int i = 0; i < 300 && std::filesystem::exists(scratch.file("grow")); ++i)
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
            ASSERT_FALSE(std::filesystem::exists(scratch.file("grow")));
            web1.dump(leaky.pid());
            std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // a time apart for the growth rate
        }
    }
    web1.upload();
    web2.upload();

    const std::string index = scratch.file("fleet-index.json");
    const json first = fleet(web1, index);
    ASSERT_FALSE(first.is_discarded());
    EXPECT_EQ(first["reports"], 5);
    EXPECT_EQ(first["source"]["read"], 5);
    EXPECT_EQ(first["source"]["from_index"], 0);
    ASSERT_EQ(first["findings"].size(), 2u) << first["findings"].dump(1);
    const json sessions = finding_through(first, "Sessions.static LEAK");
    ASSERT_FALSE(sessions.is_null()) << first["findings"].dump(1);
    EXPECT_EQ(hosts_of(sessions), (std::vector<std::string>{"web-1", "web-2"}));
    EXPECT_EQ(sessions["reports"], 2);
    EXPECT_EQ(sessions["services"], json::array({"Sessions"}));
    const json leaky = finding_through(first, "Leaky.static LEAKED");
    ASSERT_FALSE(leaky.is_null()) << first["findings"].dump(1);
    EXPECT_EQ(hosts_of(leaky), std::vector<std::string>{"web-1"});
    EXPECT_EQ(leaky["reports"], 2);
    ASSERT_EQ(leaky["jvms"].size(), 1u);
    EXPECT_EQ(leaky["jvms"][0]["reports"], 2);
    EXPECT_GT(leaky["jvms"][0]["last_bytes"].get<std::uint64_t>(),
              leaky["jvms"][0]["first_bytes"].get<std::uint64_t>());
    EXPECT_GT(leaky["jvms"][0]["bytes_per_hour"].get<double>(), 0);
    // The healthy JVM is a report of its service, and of no finding.
    EXPECT_EQ(first["without_suspect"], 1);
    bool healthy_listed = false;
    for (const json& s : first["services"]) healthy_listed |= s["service"] == "AttachTarget" && s["reports"] == 1;
    EXPECT_TRUE(healthy_listed) << first["services"].dump(1);
    for (const json& f : first["findings"]) EXPECT_EQ(f["services"].dump().find("AttachTarget"), std::string::npos);

    // A third host dumps the session leak: read alone, the finding now on three hosts.
    fleet_host web3("web-3", server);
    ASSERT_TRUE(web3.daemon.ready()) << web3.daemon.log();
    {
        demo_jvm sessions3(java_main{"Sessions"}, {"-Xmx256m"}, {"25000"});
        ASSERT_TRUE(sessions3.ready());
        web3.dump(sessions3.pid());
    }
    web3.upload();
    const json second = fleet(web1, index);
    EXPECT_EQ(second["reports"], 6);
    EXPECT_EQ(second["source"]["read"], 1);
    EXPECT_EQ(second["source"]["from_index"], 5);
    ASSERT_EQ(second["findings"].size(), 2u);
    EXPECT_EQ(hosts_of(finding_through(second, "Sessions.static LEAK")),
              (std::vector<std::string>{"web-1", "web-2", "web-3"}));
    EXPECT_EQ(second["findings"][0]["path"], sessions["path"]);  // the most hosts first

    // The page: findings, a point per report linked to its page in the bucket, nothing loaded.
    const std::string page = scratch.file("fleet.html");
    auto made = run_command({heapd_binary(), "fleet", "--config", web1.config, "--index", index, "--html", page});
    ASSERT_EQ(made.exit_code, 0) << made.err;
    EXPECT_NE(made.err.find("0 read, 6 from the index"), std::string::npos) << made.err;
    if (!headless_browser::chromium_installed()) GTEST_SKIP() << "chromium is not installed (.ci/install test)";
    std::string why;
    auto browser = headless_browser::start(scratch.path(), true, &why);
    ASSERT_TRUE(browser) << why;
    ASSERT_TRUE(browser->open("file://" + page)) << browser->error();
    EXPECT_EQ(browser->evaluate("document.querySelectorAll('#findings-table tbody tr').length"), 2);
    EXPECT_EQ(browser->evaluate("document.querySelectorAll('circle.report-point').length"), 6);
    const json links =
        browser->evaluate("Array.from(document.querySelectorAll('svg.timeline a')).map(a => a.getAttribute('href'))");
    ASSERT_EQ(links.size(), 6u);
    for (const json& l : links) {
        const std::string href = l;
        EXPECT_EQ(href.rfind(server.endpoint() + "/heapd-test/prod/web-", 0), 0u) << href;
        EXPECT_TRUE(href.ends_with("/report.html")) << href;
        EXPECT_TRUE(
            server.object(href.substr(server.endpoint().size() + std::string("/heapd-test/").size())).has_value())
            << href;
    }
    EXPECT_EQ(browser->evaluate("document.querySelector('#findings-table tbody tr td').textContent.includes('"
                                "java.util.ArrayList')"),
              true);
    for (const std::string& r : browser->requests()) EXPECT_EQ(r.rfind("file://", 0), 0u) << r;
    for (const page_event& e : browser->console()) ADD_FAILURE() << e.kind << " " << e.level << ": " << e.text;
}

// A bucket longer than a listing page (1000 keys): every page is read, and the next run reads none.
TEST(fleet_command, a_bucket_of_more_than_a_listing_page_is_read_whole) {
    ASSERT_FALSE(s3_test_server::s3rver_module().empty()) << "s3rver is not installed: run .ci/setup";
    scratch_dir scratch;
    s3_test_server server(scratch.file("s3"), "heapd-test", "S3RVER");
    ASSERT_TRUE(server.start()) << server.refusals();
    daemon::s3_client client(daemon::s3_target{server.endpoint(), "heapd-test", "us-east-1", "S3RVER", "S3RVER"});
    constexpr int reports = 1050;
    for (int n = 0; n < reports; ++n) {
        analysis_report r;
        fleet_context c;
        c.host = "host-" + std::to_string(n % 50);
        c.service = "Svc";
        c.id = std::to_string(n);
        c.key = "prod/" + c.host + "/Svc/" + c.id;
        c.pid = 100 + n % 50;
        c.created_ms = 1'790'000'000'000 + n;
        const std::string text = to_json(fleet_entry_of(r, c)).dump();
        const int fd = ::memfd_create("summary", MFD_CLOEXEC);
        ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
        auto put = client.put_object(c.key + "/summary.json", fd, 0, text.size(), "application/json");
        ::close(fd);
        ASSERT_TRUE(put) << put.error().message;
    }
    std::ofstream(scratch.file("credentials")) << "S3RVER:S3RVER\n";
    ::chmod(scratch.file("credentials").c_str(), 0600);
    std::ofstream(scratch.file("heapd.toml")) << "[upload]\nendpoint = \"" << server.endpoint()
                                              << "\"\nbucket = \"heapd-test\"\nprefix = \"prod\"\ncredentials_file = \""
                                              << scratch.file("credentials") << "\"\n";
    for (int run = 0; run < 2; ++run) {
        auto r = run_command({heapd_binary(), "fleet", "--config", scratch.file("heapd.toml"), "--index",
                              scratch.file("index.json"), "--json"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const json view = json::parse(r.out, nullptr, false);
        EXPECT_EQ(view["reports"], reports);
        EXPECT_EQ(view["hosts"].size(), 50u);
        EXPECT_EQ(view["source"]["read"], run == 0 ? reports : 0);
        EXPECT_EQ(view["source"]["from_index"], run == 0 ? 0 : reports);
    }
}

// A local copy of a bucket: a report uploaded before summaries existed is read from its report.json
// (its place from its key); links are never followed, whether to a file or to a directory.
TEST(fleet_command, a_directory_is_read_without_following_links_and_old_reports_from_their_report) {
    scratch_dir scratch;
    const std::string tree = scratch.file("bucket");
    const std::string entry = tree + "/prod/web-9/Sessions/20261101T000000-1";
    std::filesystem::create_directories(entry);
    const command_result analyzed = sessions_report(scratch);
    ASSERT_EQ(analyzed.exit_code, 0) << analyzed.err;
    std::ofstream(entry + "/report.json") << analyzed.out;
    // A summary that is a link to a file elsewhere, and a host directory that is a link.
    const std::string elsewhere = scratch.file("elsewhere");
    std::filesystem::create_directories(elsewhere + "/Other/1");
    std::ofstream(elsewhere + "/Other/1/summary.json") << "{}";
    std::filesystem::create_directories(tree + "/prod/web-8/Sessions/2");
    std::filesystem::create_symlink(elsewhere + "/Other/1/summary.json", tree + "/prod/web-8/Sessions/2/summary.json");
    std::filesystem::create_directory_symlink(elsewhere, tree + "/prod/web-7");

    auto r = run_command({heapd_binary(), "fleet", "--dir", tree, "--no-index", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json view = json::parse(r.out, nullptr, false);
    EXPECT_EQ(view["reports"], 1) << r.out;
    EXPECT_EQ(view["source"]["left_out"], 0);
    ASSERT_EQ(view["findings"].size(), 1u);
    EXPECT_EQ(hosts_of(view["findings"][0]), std::vector<std::string>{"web-9"});
    EXPECT_EQ(view["findings"][0]["services"], json::array({"Sessions"}));
    EXPECT_NE(view["findings"][0]["path"].get<std::string>().find("Sessions.static LEAK"), std::string::npos);
    // The text names the finding and the host.
    auto text = run_command({heapd_binary(), "fleet", "--dir", tree, "--no-index"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("1 report from 1 host, 1 service"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("hosts: web-9 (1)"), std::string::npos) << text.out;
    // A directory named relative to where heapd runs: the page links each report by its absolute path.
    auto relative = run_command({"sh", "-c", "cd \"$0\" && exec \"$1\" fleet --dir bucket --no-index --html page.html",
                                 scratch.path(), heapd_binary()});
    ASSERT_EQ(relative.exit_code, 0) << relative.err;
    std::ifstream page_file(scratch.file("page.html"));
    const std::string page((std::istreambuf_iterator<char>(page_file)), std::istreambuf_iterator<char>());
    EXPECT_NE(page.find("href=\"file://" + tree + "/prod/web-9/Sessions/20261101T000000-1/report.html\""),
              std::string::npos);
    // A bad --since is a usage error.
    EXPECT_EQ(run_command({heapd_binary(), "fleet", "--dir", tree, "--since", "last tuesday"}).exit_code, 1);
}

// A host that may write to the bucket speaks only for the keys it may write: a summary at
// PREFIX/evil/SERVICE/ID that says it is web-1's counts as evil's (it was counted as web-1's). And a
// report.json without a summary, 16 MiB of empty objects, is read within a memory bound that the
// whole JSON document (445 MiB for it) would pass.
TEST(fleet_command, a_report_speaks_only_for_where_it_lies_and_a_crafted_one_costs_little_more_than_its_bytes) {
    scratch_dir scratch;
    const std::string tree = scratch.file("bucket");
    const command_result analyzed = sessions_report(scratch);
    ASSERT_EQ(analyzed.exit_code, 0) << analyzed.err;
    fleet_context claimed;
    claimed.key = "prod/web-1/Sessions/20261101T000000-1";
    claimed.host = "web-1";
    claimed.service = "Sessions";
    claimed.id = "20261101T000000-1";
    auto entry = fleet_entry_of_report(analyzed.out, claimed);
    ASSERT_TRUE(entry) << entry.error().message;
    const std::string evil = tree + "/prod/evil/Other/2";
    std::filesystem::create_directories(evil);
    std::ofstream(evil + "/summary.json") << to_json(*entry).dump();
    auto r = run_command({heapd_binary(), "fleet", "--dir", tree, "--no-index", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json view = json::parse(r.out, nullptr, false);
    ASSERT_EQ(view["findings"].size(), 1u) << r.out;
    EXPECT_EQ(hosts_of(view["findings"][0]), std::vector<std::string>{"evil"});
    EXPECT_EQ(view["findings"][0]["services"], json::array({"Other"}));

    // 16 MiB of empty objects in a report from elsewhere, read with 256 MiB of address space at most.
    const std::string crafted = tree + "/prod/web-2/Sessions/3";
    std::filesystem::create_directories(crafted);
    {
        std::string text = analyzed.out;
        while (!text.empty() && text.back() != '}') text.pop_back();
        text.pop_back();
        std::ofstream out(crafted + "/report.json");
        out << text << ",\"padding\":[{}";
        for (int i = 0; i < (16 << 20) / 3; ++i) out << ",{}";
        out << "]}";
    }
    const std::string limited = "ulimit -v 262144 && exec \"$0\" fleet --dir \"$1\" --no-index --json";
    r = run_command({"sh", "-c", limited, heapd_binary(), tree});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    view = json::parse(r.out, nullptr, false);
    EXPECT_EQ(view["reports"], 2) << r.out.substr(0, 2000);
}

// The index's folder is the user's when it exists (--index /tmp/fleet.json run as root must leave
// /tmp as it is): heapd fleet makes a missing one 0700 and never changes one that exists.
TEST(fleet_command, the_index_never_changes_the_mode_of_a_folder_that_exists) {
    scratch_dir scratch;
    const std::string tree = scratch.file("bucket"), shared = scratch.file("shared");
    std::filesystem::create_directories(tree);
    std::filesystem::create_directories(shared);
    ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);
    auto r = run_command({heapd_binary(), "fleet", "--dir", tree, "--index", shared + "/fleet.json", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    struct stat st {};
    ASSERT_EQ(::stat(shared.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 01777u);
    ASSERT_EQ(::stat((shared + "/fleet.json").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    const std::string fresh = scratch.file("fresh/index");
    r = run_command({heapd_binary(), "fleet", "--dir", tree, "--index", fresh + "/fleet.json", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_EQ(::stat(fresh.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
}

}  // namespace
}  // namespace heapd::test
