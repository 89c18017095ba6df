// `heapd serve` end to end on a temporary socket and store: what it answers, how it takes garbage,
// oversized messages and many clients, and how it starts and stops.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "support/isolated_jvm.h"
#include "support/jvm_process.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

using wire::error_kind;
using wire::json;
using wire::reply_kind;

const std::string peer_dump = std::string(HEAPD_PEER_DATA) + "/hprof-64.bin";

// One request on a fresh connection, its final reply (progress events skipped).
std::optional<wire::reply> ask(const serve_process& d, const std::string& type, json args = json::object(),
                               int fd = -1) {
    raw_client c(d.socket());
    if (!c.connected() || !c.send_request({9, type, std::move(args)}, fd)) return std::nullopt;
    for (;;) {
        auto r = c.read_reply(std::chrono::seconds(120));
        if (!r || r->kind != reply_kind::progress) return r;
    }
}

// The state letter of /proc/PID/stat ('R', 'S', 'Z', ...), or '?'.
char process_state(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(in, line);
    auto paren = line.rfind(')');
    return paren != std::string::npos && paren + 2 < line.size() ? line[paren + 2] : '?';
}

bool serves(const serve_process& d) {
    auto r = ask(d, "status");
    return r && r->kind == reply_kind::result;
}

TEST(serve, answers_status_with_the_socket_open_to_all_and_the_store_closed) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    auto r = ask(d, "status");
    ASSERT_TRUE(r && r->kind == reply_kind::result);
    EXPECT_EQ(r->result["pid"], d.pid());
    EXPECT_EQ(r->result["protocol"], wire::protocol_version);
    EXPECT_EQ(r->result["store"]["path"], d.store());
    EXPECT_EQ(r->result["workers"], 1);
    EXPECT_EQ(r->result["you"]["uid"], 0);
    EXPECT_EQ(r->result["you"]["admin"], true);
    struct stat st {};
    ASSERT_EQ(::stat(d.socket().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0666u);
    ASSERT_EQ(::stat(d.store().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0007, 0u);
    EXPECT_NE(d.log().find("serving on " + d.socket()), std::string::npos) << d.log();
}

TEST(serve, malformed_messages_get_error_replies_on_a_connection_that_goes_on) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    raw_client c(d.socket());
    ASSERT_TRUE(c.connected());
    struct bad {
        std::string payload;
        error_kind kind;
        std::uint64_t id;
    };
    const bad cases[] = {
        {"not json at all", error_kind::bad_request, 0},
        {"[1,2]", error_kind::bad_request, 0},
        {R"({"v":3,"id":5,"type":"status"})", error_kind::unsupported_version, 5},
        {R"({"v":2,"id":5,"type":"analyse"})", error_kind::unknown_type, 5},  // version 1's name only
        {R"({"v":1,"id":6,"type":"launch_missiles"})", error_kind::unknown_type, 6},
        {R"({"v":1,"id":7,"type":"status","args":[]})", error_kind::bad_request, 7},
        {R"({"v":1,"id":8,"type":"report","args":{"dump":5}})", error_kind::bad_request, 8},
        {R"({"v":1,"id":9,"type":"report","args":{"dump":"../../etc"}})", error_kind::not_found, 9},
        {R"({"v":1,"id":10,"type":"cancel","args":{"job":-1}})", error_kind::bad_request, 10},
        {R"({"v":1,"id":11,"type":"analyze","args":{"name":"x"}})", error_kind::bad_request, 11},  // no descriptor
        {"{\"a\":" + std::string(5000, '[') + std::string(5000, ']') + "}", error_kind::bad_request, 0},
        {"", error_kind::bad_request, 0},
    };
    for (const bad& b : cases) {
        std::string header(4, '\0');
        const auto n = static_cast<std::uint32_t>(b.payload.size());
        for (int i = 0; i < 4; ++i) header[i] = static_cast<char>(n >> (24 - 8 * i));
        ASSERT_TRUE(c.send_bytes(header + b.payload));
        auto r = c.read_reply(std::chrono::seconds(30));
        ASSERT_TRUE(r.has_value()) << b.payload.substr(0, 80);
        EXPECT_EQ(r->kind, reply_kind::error) << b.payload.substr(0, 80);
        EXPECT_EQ(r->error.kind, b.kind) << b.payload.substr(0, 80) << ": " << r->error.message;
        EXPECT_EQ(r->id, b.id);
    }
    ASSERT_TRUE(c.send_request({42, "status", json::object()}));
    auto r = c.read_reply();
    ASSERT_TRUE(r && r->kind == reply_kind::result);
    EXPECT_EQ(r->id, 42u);
}

// A client of protocol version 1 (an older heapctl) still has its dump analysed: "analyse" is read
// as "analyze", and every reply, progress and result, comes back in version 1.
TEST(serve, a_version_1_client_is_answered_in_version_1) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    raw_client c(d.socket());
    const int fd = ::open(peer_dump.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    const std::string payload = R"({"v":1,"id":3,"type":"analyse","args":{"name":"hprof-64.bin","wait":true}})";
    std::string header(4, '\0');
    for (int i = 0; i < 4; ++i) header[i] = static_cast<char>(payload.size() >> (24 - 8 * i));
    ASSERT_TRUE(c.send_bytes(header + payload, fd));
    ::close(fd);
    std::optional<wire::reply> r;
    while ((r = c.read_reply(std::chrono::seconds(120))) && r->kind == reply_kind::progress) EXPECT_EQ(r->version, 1u);
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->kind, reply_kind::result) << r->error.message;
    EXPECT_EQ(r->version, 1u);
    EXPECT_EQ(r->id, 3u);
    EXPECT_TRUE(r->result.contains("report")) << r->result.dump().substr(0, 200);
    // A client of this version on the same daemon is answered in its own.
    raw_client now(d.socket());
    ASSERT_TRUE(now.send_request({4, "status", json::object()}));
    auto s = now.read_reply();
    ASSERT_TRUE(s && s->kind == reply_kind::result);
    EXPECT_EQ(s->version, wire::protocol_version);
}

TEST(serve, descriptors_that_are_no_readable_file_are_refused) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    int p[2];
    ASSERT_EQ(::pipe(p), 0);
    auto piped = ask(d, "analyze", {{"name", "pipe"}}, p[0]);
    ::close(p[0]);
    ::close(p[1]);
    ASSERT_TRUE(piped && piped->kind == reply_kind::error);
    EXPECT_EQ(piped->error.kind, error_kind::bad_input);
    EXPECT_NE(piped->error.message.find("not a regular file"), std::string::npos);
    const std::string file = d.dir() + "/w.hprof";
    std::filesystem::copy_file(peer_dump, file);
    int w = ::open(file.c_str(), O_WRONLY);
    auto write_only = ask(d, "analyze", {{"name", "w"}}, w);
    ::close(w);
    ASSERT_TRUE(write_only && write_only->kind == reply_kind::error);
    EXPECT_EQ(write_only->error.kind, error_kind::bad_input);
    EXPECT_NE(write_only->error.message.find("not open for reading"), std::string::npos);
    auto jobs = ask(d, "jobs");
    EXPECT_TRUE(jobs && jobs->result["jobs"].empty());  // no job was made of either
}

TEST(serve, an_oversized_message_is_refused_and_only_its_connection_closed) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    {
        raw_client c(d.socket());
        ASSERT_TRUE(c.send_bytes(std::string("\x01\x00\x00\x01", 4)));  // 16 MiB + 1
        auto r = c.read_reply();
        ASSERT_TRUE(r.has_value());
        EXPECT_EQ(r->error.kind, error_kind::too_large);
        EXPECT_TRUE(c.closed_by_daemon());
    }
    {
        // Exactly the limit is taken, and read as the garbage it is.
        raw_client c(d.socket());
        ASSERT_TRUE(c.send_bytes(std::string("\x01\x00\x00\x00", 4) + std::string(16u << 20, 'x')));
        auto r = c.read_reply();
        ASSERT_TRUE(r.has_value());
        EXPECT_EQ(r->error.kind, error_kind::bad_request);
    }
    EXPECT_TRUE(serves(d));
}

TEST(serve, random_bytes_from_many_connections_never_take_it_down) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    std::mt19937 rng(2026);
    for (int i = 0; i < 200; ++i) {
        raw_client c(d.socket());
        std::string junk(rng() % 300, '\0');
        for (char& ch : junk) ch = static_cast<char>(rng());
        if (i % 3 == 0 && junk.size() >= 4) junk[0] = junk[1] = '\0';  // plausible lengths too
        c.send_bytes(junk);
    }
    EXPECT_TRUE(serves(d));
    EXPECT_EQ(d.stop(SIGTERM), 0) << d.log();
}

TEST(serve, fifty_clients_at_once_are_all_answered) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    std::vector<std::unique_ptr<raw_client>> clients;
    for (int i = 0; i < 50; ++i) clients.push_back(std::make_unique<raw_client>(d.socket()));
    // All connected at once, then each asks on its own thread.
    std::atomic<int> answered{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 50; ++i)
        threads.emplace_back([&, i] {
            raw_client& c = *clients[static_cast<std::size_t>(i)];
            bool all = c.connected();
            for (const char* type : {"status", "jobs", "dumps"}) {
                all = all && c.send_request({static_cast<std::uint64_t>(i + 1), type, json::object()});
                auto r = all ? c.read_reply() : std::nullopt;
                all = all && r && r->kind == reply_kind::result && r->id == static_cast<std::uint64_t>(i + 1);
            }
            answered += all;
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(answered.load(), 50);
    auto status = ask(d, "status");
    ASSERT_TRUE(status.has_value());
}

TEST(serve, sigterm_stops_it_gracefully_and_removes_the_socket) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    EXPECT_EQ(d.stop(SIGTERM), 0);
    EXPECT_FALSE(std::filesystem::exists(d.socket()));
    EXPECT_NE(d.log().find("stopping on SIGTERM"), std::string::npos) << d.log();
    EXPECT_NE(d.log().find("stopped"), std::string::npos) << d.log();
    // It starts again on the same socket and store.
    ASSERT_TRUE(d.start()) << d.log();
}

// A service manager restarts heapd once it has logged that it stopped: the store's lock is free by
// then (tried the moment the line is seen, the log read every 2 ms).
TEST(serve, the_store_is_free_once_it_says_stopped) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    const int lock = ::open((d.store() + "/lock").c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(lock, 0);
    EXPECT_NE(::flock(lock, LOCK_EX | LOCK_NB), 0);  // held while it serves
    ASSERT_EQ(::kill(d.pid(), SIGTERM), 0);
    bool said = false;
    for (int i = 0; i < 5000 && !(said = d.log().find("info: stopped") != std::string::npos); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    ASSERT_TRUE(said) << d.log();
    EXPECT_EQ(::flock(lock, LOCK_EX | LOCK_NB), 0) << "the store is still locked after \"stopped\"";
    ::close(lock);
    EXPECT_EQ(d.stop(0), 0);  // it exits of itself (a second SIGTERM now would end it by the signal)
}

TEST(serve, a_second_daemon_on_the_same_socket_or_store_is_refused) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    auto same_socket = run_command({heapd_binary(), "serve", "--foreground", "--oom-arm", "hooked", "--socket",
                                    d.socket(), "--store", d.dir() + "/other-store"});
    EXPECT_EQ(same_socket.exit_code, 3);
    EXPECT_NE(same_socket.err.find("another heapd is already serving " + d.socket()), std::string::npos)
        << same_socket.err;
    auto same_store = run_command({heapd_binary(), "serve", "--foreground", "--oom-arm", "hooked", "--socket",
                                   d.dir() + "/other.sock", "--store", d.store()});
    EXPECT_EQ(same_store.exit_code, 3);
    EXPECT_NE(same_store.err.find("another heapd is using the store"), std::string::npos) << same_store.err;
    EXPECT_TRUE(serves(d));
}

// Someone removes the socket file (a clean-up of /run, a mistaken rm): the daemon notices within
// its 2 s tick, binds a new one and says so; clients reach it again.
TEST(serve, a_removed_socket_file_is_made_again) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    ASSERT_TRUE(std::filesystem::remove(d.socket()));
    bool back = false;
    for (int i = 0; i < 100 && !(back = serves(d)); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_TRUE(back) << d.log();
    EXPECT_NE(d.log().find("was removed or replaced: made again"), std::string::npos) << d.log();
    struct stat st {};
    ASSERT_EQ(::stat(d.socket().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0666u);
    EXPECT_EQ(d.stop(SIGTERM), 0);
    EXPECT_FALSE(std::filesystem::exists(d.socket()));
}

TEST(serve, a_stale_socket_file_is_replaced_and_another_file_is_left_alone) {
    shared_dir dir;
    {
        // Killed with SIGKILL, a daemon leaves its socket file; the next one replaces it.
        serve_process d;
        ASSERT_TRUE(d.ready()) << d.log();
        EXPECT_EQ(d.stop(SIGKILL), 128 + SIGKILL);
        ASSERT_TRUE(std::filesystem::is_socket(d.socket()));
        ASSERT_TRUE(d.start()) << d.log();
    }
    const std::string not_socket = dir.file("file.sock");
    { std::ofstream(not_socket) << "mine"; }
    auto refused = run_command({heapd_binary(), "serve", "--foreground", "--oom-arm", "hooked", "--socket", not_socket,
                                "--store", dir.file("s")});
    EXPECT_EQ(refused.exit_code, 3);
    EXPECT_NE(refused.err.find("exists and is not a socket"), std::string::npos) << refused.err;
    EXPECT_TRUE(std::filesystem::is_regular_file(not_socket));
}

TEST(serve, without_foreground_it_detaches_once_it_serves) {
    shared_dir dir;
    const std::string socket = dir.file("bg.sock");
    auto started =
        run_command({heapd_binary(), "serve", "--oom-arm", "hooked", "--socket", socket, "--store", dir.file("store")});
    ASSERT_EQ(started.exit_code, 0) << started.err;
    raw_client c(socket);
    ASSERT_TRUE(c.connected());
    ASSERT_TRUE(c.send_request({1, "status", json::object()}));
    auto r = c.read_reply();
    ASSERT_TRUE(r && r->kind == reply_kind::result);
    const pid_t pid = r->result["pid"].get<pid_t>();
    ASSERT_GT(pid, 1);
    c.close();
    ASSERT_EQ(::kill(pid, SIGTERM), 0);
    bool gone = false;
    for (int i = 0; i < 300 && !gone; ++i) {
        gone = ::kill(pid, 0) != 0 || process_state(pid) == 'Z';  // reaped, or dead and not yet reaped
        if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!gone) ::kill(pid, SIGKILL);
    EXPECT_TRUE(gone);
    EXPECT_FALSE(std::filesystem::exists(socket));
}

TEST(serve, an_entry_with_garbled_metadata_is_kept_aside_and_listed_to_root_only) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    ASSERT_EQ(run_heapctl(d, {"report", "--top", "1", peer_dump}).exit_code, 0);
    ASSERT_EQ(run_heapctl(d, {"report", "--top", "1", peer_dump}).exit_code, 0);
    auto dumps = json::parse(run_heapctl(d, {"dumps", "--json"}).out);
    ASSERT_EQ(dumps.size(), 2u);
    const std::string garbled = dumps[1]["id"], kept = dumps[0]["id"];
    ASSERT_EQ(d.stop(), 0);
    std::ofstream(d.store() + "/entries/" + garbled + "/metadata.json") << "{\"id\": \"" << garbled;

    ASSERT_TRUE(d.start()) << d.log();
    EXPECT_NE(d.log().find("store: damaged entries/" + garbled), std::string::npos) << d.log();
    // Its report is still there, aside; the other entry is served as before.
    EXPECT_TRUE(std::filesystem::is_regular_file(d.store() + "/damaged/" + garbled + "/report.json"));
    dumps = json::parse(run_heapctl(d, {"dumps", "--json"}).out);
    ASSERT_EQ(dumps.size(), 1u);
    EXPECT_EQ(dumps[0]["id"], kept);
    const std::string listed = run_heapctl(d, {"dumps"}).out;
    EXPECT_NE(listed.find("damaged entries kept aside"), std::string::npos) << listed;
    EXPECT_NE(listed.find(garbled + ": metadata.json is not JSON"), std::string::npos) << listed;
    // Whose it was is unknown: another user sees nothing of it.
    temp_user user;
    ASSERT_TRUE(user.ok());
    const command_result theirs = run_heapctl(d, {"dumps"}, &user);
    EXPECT_EQ(theirs.exit_code, 0) << theirs.err;
    EXPECT_EQ(theirs.out.find("damaged"), std::string::npos) << theirs.out;
    EXPECT_EQ(theirs.out.find(garbled), std::string::npos) << theirs.out;
}

}  // namespace
}  // namespace heapd::test
