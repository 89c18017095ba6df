// `heapd upload` against an S3 server started by the test on the loopback (s3rver behind a front
// that checks AWS Signature V4): each stored report lands under PREFIX/HOST/MAIN CLASS/DUMP ID/ with
// its HTML page and its stripped, compressed dump; a wrong secret uploads nothing; a server that
// goes away mid-upload is resumed from where it stopped, under the same key, nothing lost.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "formats/wire/protocol.h"
#include "support/jvm_process.h"
#include "support/s3_test_server.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

namespace fs = std::filesystem;

std::string read_whole(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

void write_private(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    ::chmod(path.c_str(), 0600);
}

std::string gunzip(const std::string& compressed) {
    z_stream z{};
    inflateInit2(&z, 31);
    std::string out;
    char buffer[1 << 16];
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
    z.avail_in = static_cast<uInt>(compressed.size());
    int rc = Z_OK;
    while (rc == Z_OK) {
        z.next_out = reinterpret_cast<Bytef*>(buffer);
        z.avail_out = sizeof buffer;
        rc = inflate(&z, Z_NO_FLUSH);
        out.append(buffer, sizeof buffer - z.avail_out);
    }
    inflateEnd(&z);
    return rc == Z_STREAM_END ? out : std::string();
}

// The one entry of a store.
std::string only_entry(const std::string& store) {
    std::vector<std::string> ids;
    for (const auto& e : fs::directory_iterator(store + "/entries"))
        if (e.path().filename().string().front() != '.') ids.push_back(e.path().filename().string());
    return ids.size() == 1 ? ids.front() : std::string();
}

// A store holding one dump of a real JVM (its report made by the daemon), and a config to upload it.
struct upload_setup {
    scratch_dir dir;
    serve_process daemon;
    std::string id;
    std::string config;
    std::string state() const { return dir.file("state"); }
};

void make_store(upload_setup& s, const java_main& program, const std::vector<std::string>& args) {
    ASSERT_TRUE(s.daemon.ready()) << s.daemon.log();
    demo_jvm jvm(program, {"-Xmx512m", "-Xshare:off"}, args);
    ASSERT_TRUE(jvm.ready());
    auto dumped = run_heapctl(s.daemon, {"dump", std::to_string(jvm.pid()), "--wait", "--json"});
    ASSERT_EQ(dumped.exit_code, 0) << dumped.err << s.daemon.log();
    s.daemon.stop();
    s.id = only_entry(s.daemon.store());
    ASSERT_FALSE(s.id.empty());
}

// deaths: the daemon's death records too (off where a test counts the keys: while a test's daemon
// runs, it records the deaths of other tests' JVMs as well).
void write_config(upload_setup& s, const s3_test_server& server, const std::string& secret, bool dump,
                  bool deaths = false) {
    write_private(s.dir.file("credentials"), "S3RVER:" + secret + "\n");
    s.config = s.dir.file("heapd.toml");
    std::ofstream(s.config) << "[daemon]\nstore = \"" << s.daemon.store() << "\"\n"
                            << "[upload]\nendpoint = \"" << server.endpoint() << "\"\nbucket = \"heapd-test\"\n"
                            << "prefix = \"fleet\"\ncredentials_file = \"" << s.dir.file("credentials") << "\"\n"
                            << "state = \"" << s.state() << "\"\ndump = " << (dump ? "true" : "false") << "\n"
                            << "deaths = " << (deaths ? "true" : "false") << "\n"
                            << "part_size = \"5M\"\ninterval = \"1s\"\nmetrics_textfile = \""
                            << s.dir.file("upload.prom") << "\"\n";
}

// The keys of an entry, as heapd upload lays them out.
std::string key_base(const upload_setup& s, const std::string& main_class) {
    char host[256] = "";
    ::gethostname(host, sizeof host);
    return "fleet/" + std::string(host) + "/" + main_class + "/" + s.id;
}

bool wait_until(int seconds, const std::function<bool()>& done) {
    for (int i = 0; i < seconds * 10; ++i) {
        if (done()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return done();
}

// A metric's value in the uploader's textfile, -1 when absent.
double metric(const std::string& file, const std::string& name) {
    std::istringstream in(read_whole(file));
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(name + " ", 0) == 0) return std::stod(line.substr(name.size() + 1));
    return -1;
}

TEST(upload_command, a_wrong_secret_uploads_nothing_and_the_right_one_everything) {
    ASSERT_FALSE(s3_test_server::s3rver_module().empty()) << "s3rver is not installed: run .ci/setup";
    upload_setup s;
    make_store(s, java_main{"Demo"}, {});
    s3_test_server server(s.dir.file("s3"), "heapd-test", "S3RVER");
    ASSERT_TRUE(server.start()) << server.refusals();

    write_config(s, server, "not-the-secret", false);
    auto wrong = run_command({heapd_binary(), "upload", "--config", s.config, "--once"});
    EXPECT_EQ(wrong.exit_code, 6) << wrong.err;
    EXPECT_NE(wrong.err.find("SignatureDoesNotMatch"), std::string::npos) << wrong.err;
    EXPECT_TRUE(server.keys().empty());
    EXPECT_NE(server.refusals().find("signature differs"), std::string::npos) << server.refusals();
    EXPECT_EQ(metric(s.dir.file("upload.prom"), "heapd_upload_failures_total"), 1);
    EXPECT_EQ(metric(s.dir.file("upload.prom"), "heapd_upload_queue_entries"), 1);

    write_config(s, server, "S3RVER", false);
    auto right = run_command({heapd_binary(), "upload", "--config", s.config, "--once"});
    ASSERT_EQ(right.exit_code, 0) << right.err;
    const std::string base = key_base(s, "Demo");
    EXPECT_EQ(server.keys(),
              (std::vector<std::string>{base + "/report.html", base + "/report.json", base + "/summary.json"}));
    EXPECT_EQ(server.object(base + "/report.json"), read_whole(s.daemon.store() + "/entries/" + s.id + "/report.json"));
    const std::string page = server.object(base + "/report.html").value_or("");
    EXPECT_NE(page.find("Content-Security-Policy"), std::string::npos);
    EXPECT_NE(page.find(s.id), std::string::npos);
    // What heapd fleet reads: where and what, and the report's suspects by signature.
    const auto summary = wire::json::parse(server.object(base + "/summary.json").value_or(""), nullptr, false);
    ASSERT_FALSE(summary.is_discarded());
    EXPECT_EQ(summary.value("key", ""), base);
    EXPECT_EQ(summary.value("id", ""), s.id);
    EXPECT_EQ(summary.value("service", ""), "Demo");
    EXPECT_GT(summary.value("pid", 0), 0);
    EXPECT_GT(summary.value("reachable_bytes", 0), 0);
    EXPECT_EQ(metric(s.dir.file("upload.prom"), "heapd_upload_objects_total"), 3);
    EXPECT_EQ(metric(s.dir.file("upload.prom"), "heapd_upload_entries_total"), 1);
    EXPECT_EQ(metric(s.dir.file("upload.prom"), "heapd_upload_queue_entries"), 0);

    // Done is done: another pass sends nothing.
    auto again = run_command({heapd_binary(), "upload", "--config", s.config, "--once"});
    EXPECT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(metric(s.dir.file("upload.prom"), "heapd_upload_objects_total"), 0);
}

TEST(upload_command, a_server_that_goes_away_mid_upload_is_resumed_under_the_same_key) {
    ASSERT_FALSE(s3_test_server::s3rver_module().empty()) << "s3rver is not installed: run .ci/setup";
    upload_setup s;
    make_store(s, java_main{"RandomGraph"}, {"3000000"});
    s3_test_server server(s.dir.file("s3"), "heapd-test", "S3RVER");
    ASSERT_TRUE(server.start()) << server.refusals();
    write_config(s, server, "S3RVER", true);
    const std::string prom = s.dir.file("upload.prom"), log = s.dir.file("upload.log");

    // heapd upload as its service runs it, in the background.
    const pid_t uploader = ::fork();
    if (uploader == 0) {
        const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        ::dup2(fd, STDOUT_FILENO);
        ::dup2(fd, STDERR_FILENO);
        const std::string heapd = heapd_binary();
        ::execl(heapd.c_str(), heapd.c_str(), "upload", "--config", s.config.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    // Two parts of the dump in the bucket, then the server goes away.
    const std::string progress = s.state() + "/pending/" + s.id + ".json";
    auto parts_done = [&] {
        auto j = wire::json::parse(read_whole(progress), nullptr, false);
        if (j.is_discarded()) return std::size_t{0};
        for (const auto& f : j["files"])
            if (f["name"] == "dump.hprof.gz") return f["parts"].size();
        return std::size_t{0};
    };
    ASSERT_TRUE(wait_until(180, [&] { return parts_done() >= 2; })) << read_whole(log);
    server.kill();
    EXPECT_FALSE(fs::exists(s.state() + "/done/" + s.id)) << "the upload ended before the server went away";
    ASSERT_TRUE(wait_until(60, [&] { return metric(prom, "heapd_upload_failures_total") >= 1; })) << read_whole(log);

    // Back: the upload goes on from the parts the server has.
    ASSERT_TRUE(server.start()) << server.refusals();
    const bool done = wait_until(180, [&] { return fs::exists(s.state() + "/done/" + s.id); });
    ::kill(uploader, SIGTERM);
    int status = 0;
    ::waitpid(uploader, &status, 0);
    ASSERT_TRUE(done) << read_whole(log);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << read_whole(log);

    const std::string base = key_base(s, "RandomGraph");
    EXPECT_EQ(server.keys(), (std::vector<std::string>{base + "/dump.hprof.gz", base + "/report.html",
                                                       base + "/report.json", base + "/summary.json"}));
    EXPECT_EQ(server.open_uploads(), 0u);
    // The object is the stored dump, stripped: what `heapd strip` writes, compressed.
    const std::string stripped = s.dir.file("stripped.hprof");
    auto strip =
        run_command({heapd_binary(), "strip", s.daemon.store() + "/entries/" + s.id + "/dump.hprof", stripped});
    ASSERT_EQ(strip.exit_code, 0) << strip.err;
    const std::string object = server.object(base + "/dump.hprof.gz").value_or("");
    const std::uint64_t part = 5u << 20;
    EXPECT_GT(object.size(), 3 * part) << "too small to need several parts";
    EXPECT_TRUE(gunzip(object) == read_whole(stripped)) << "the uploaded dump differs from heapd strip's";
    // Every part was sent once: none again after the server came back.
    EXPECT_EQ(metric(prom, "heapd_upload_parts_total"), static_cast<double>((object.size() + part - 1) / part));
    EXPECT_EQ(metric(prom, "heapd_upload_objects_total"), 4);  // summary.json too
    EXPECT_NE(read_whole(log).find("not uploaded"), std::string::npos) << read_whole(log);
    EXPECT_NE(read_whole(log).find("uploaded to s3://heapd-test/" + base + "/"), std::string::npos) << read_whole(log);
}

TEST(upload_command, a_jvms_death_record_goes_under_its_main_class) {
    ASSERT_FALSE(s3_test_server::s3rver_module().empty()) << "s3rver is not installed: run .ci/setup";
    upload_setup s;
    ASSERT_TRUE(s.daemon.ready()) << s.daemon.log();
    pid_t pid = 0;
    {
        demo_jvm jvm(java_main{"OffHeap"}, {"-Xmx64m"}, {"1", "1"});
        ASSERT_TRUE(jvm.ready());
        pid = jvm.pid();
        // Watched once it is listed and the daemon's death watcher has had a poll (5 s by default).
        ASSERT_TRUE(wait_until(60, [&] {
            const wire::json rows = wire::json::parse(run_heapctl(s.daemon, {"jvms", "--json"}).out, nullptr, false);
            if (rows.is_array())
                for (const wire::json& row : rows)
                    if (row["pid"] == pid) return true;
            return false;
        }));
        std::this_thread::sleep_for(std::chrono::seconds(6));
        ASSERT_EQ(::kill(pid, SIGKILL), 0);
    }
    std::string id;
    ASSERT_TRUE(wait_until(60, [&] {
        const wire::json list = wire::json::parse(run_heapctl(s.daemon, {"deaths", "--json"}).out, nullptr, false);
        if (list.is_array())
            for (const wire::json& item : list)
                if (item["death"]["pid"] == pid) id = item["id"];
        return !id.empty();
    })) << s.daemon.log();
    s.daemon.stop();
    s3_test_server server(s.dir.file("s3"), "heapd-test", "S3RVER");
    ASSERT_TRUE(server.start()) << server.refusals();
    write_config(s, server, "S3RVER", false, true);
    auto sent = run_command({heapd_binary(), "upload", "--config", s.config, "--once"});
    ASSERT_EQ(sent.exit_code, 0) << sent.err;
    char host[256] = "";
    ::gethostname(host, sizeof host);
    const std::string key = "fleet/" + std::string(host) + "/OffHeap/" + id + "/death.json";
    const std::string record = read_whole(s.daemon.store() + "/deaths/" + id + ".json");
    ASSERT_EQ(server.object(key), record) << sent.err;
    EXPECT_NE(record.find("\"cause\": \"killed\""), std::string::npos) << record;
    EXPECT_NE(sent.err.find("death record " + id + " uploaded to s3://heapd-test/"), std::string::npos) << sent.err;
    // Done is done: another pass sends nothing.
    auto again = run_command({heapd_binary(), "upload", "--config", s.config, "--once"});
    EXPECT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(metric(s.dir.file("upload.prom"), "heapd_upload_objects_total"), 0);
}

}  // namespace
}  // namespace heapd::test
