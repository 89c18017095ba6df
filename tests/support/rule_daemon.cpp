#include "support/rule_daemon.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <spdlog/sinks/basic_file_sink.h>

#include "daemon/jobs/analysis_child.h"
#include "daemon/store/job_record.h"
#include "support/jvm_process.h"
#include "support/oom_scenario.h"

namespace heapd::test {

using namespace std::chrono_literals;
using wire::json;

rule_daemon::rule_daemon(std::vector<daemon::dump_rule> rules, std::chrono::milliseconds poll) {
    daemon::heapd_config config;
    daemon::serve_options& o = config.serve;
    o.socket_path = dir_.file("heapd.sock");
    o.store_dir = dir_.file("store");
    o.spool_dir = "";
    o.agent_library = std::string(HEAPD_BINARY_DIR) + "/daemon/libheapd_agent.so";
    config.rules = std::move(rules);
    config.poll_interval = poll;
    // A test's daemon arms only its own JVMs (serve_process's rule): those whose hook names its socket.
    config.oom.arm = daemon::arm_mode::hooked;
    auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(dir_.file("heapd.log"));
    auto log = std::make_shared<spdlog::logger>("heapd", sink);
    log->flush_on(spdlog::level::trace);
    auto s = daemon::server::open(config, log);
    if (!s) {
        ADD_FAILURE() << s.error().message;
        return;
    }
    server_ = std::move(*s);
    thread_ = std::thread([this] { server_->run(); });
}

rule_daemon::~rule_daemon() {
    if (thread_.joinable()) {
        ::kill(::getpid(), SIGTERM);
        thread_.join();
    }
    server_.reset();
}

std::string rule_daemon::log() const { return file_text(dir_.file("heapd.log")); }

json rule_daemon::heapctl(std::vector<std::string> args) const {
    args.insert(args.begin(), {heapctl_binary(), "--socket", dir_.file("heapd.sock")});
    args.push_back("--json");
    auto r = run_command(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? json::parse(r.out) : json::array();
}

command_result rule_daemon::heapctl_text(std::vector<std::string> args) const {
    args.insert(args.begin(), {heapctl_binary(), "--socket", dir_.file("heapd.sock")});
    return run_command(args);
}

std::vector<json> rule_daemon::dump_jobs(pid_t pid) const {
    std::vector<json> out;
    for (const json& j : heapctl({"jobs"}))
        if (j["kind"] == "dump" && j["jvm_pid"] == pid) out.insert(out.begin(), j);
    return out;
}

bool rule_daemon::wait_for_dumps(pid_t pid, std::size_t n) const {
    for (auto deadline = std::chrono::steady_clock::now() + 120s; std::chrono::steady_clock::now() < deadline;) {
        auto jobs = dump_jobs(pid);
        bool ended = jobs.size() >= n;
        for (const json& j : jobs) ended = ended && j["state"] != "queued" && j["state"] != "running";
        if (ended) return true;
        std::this_thread::sleep_for(200ms);
    }
    return false;
}

std::string regex_quote(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
        out += c;
    }
    return out;
}

daemon::jvm_selector selector(const std::string& main_class, const std::string& command) {
    daemon::jvm_selector s;
    s.main_class = main_class;
    s.command = command;
    s.command_re = std::regex(command, std::regex::ECMAScript);
    return s;
}

}  // namespace heapd::test

// The test program, or the daemon's analysis child when a dump job runs it (heapd analyze-fd).
int main(int argc, char** argv) {
    if (argc > 1 && std::string_view(argv[1]) == "analyze-fd") {
        std::string name, inflate_dir;
        pid_t parent = 0;
        for (int i = 2; i + 1 < argc; i += 2) {
            std::string_view key = argv[i];
            if (key == "--name")
                name = argv[i + 1];
            else if (key == "--inflate-dir")
                inflate_dir = argv[i + 1];
            else if (key == "--parent")
                parent = static_cast<pid_t>(std::stol(argv[i + 1]));
        }
        return heapd::daemon::analyze_fd_main(name, inflate_dir, parent);
    }
    ::signal(SIGPIPE, SIG_IGN);
    testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
