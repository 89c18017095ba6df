#pragma once
// A heapd daemon with dump rules, run on a thread of the test process on a real socket and store,
// the way `heapd serve` runs it; and the main() of such test programs, which is also the daemon's
// analysis child (a dump job runs /proc/self/exe analyze-fd, here the test program).
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/server/server.h"
#include "formats/wire/protocol.h"
#include "support/jvm_process.h"
#include "support/serve_process.h"

namespace heapd::test {

// The daemon with rules, serving on a thread of this process until destroyed (SIGTERM, as a
// service manager stops it). Its log, socket and store are in a directory of its own.
class rule_daemon {
public:
    rule_daemon(std::vector<daemon::dump_rule> rules, std::chrono::milliseconds poll);
    ~rule_daemon();
    bool serving() const { return server_ != nullptr; }
    // A reload's new rules, as the configuration's reload gives them.
    void set_rules(std::vector<daemon::dump_rule> rules, std::chrono::milliseconds poll) {
        server_->set_rules(std::move(rules), poll);
    }
    std::string log() const;
    // `heapctl --socket SOCKET args... --json`, parsed.
    wire::json heapctl(std::vector<std::string> args) const;
    // `heapctl --socket SOCKET args...` as it ran.
    command_result heapctl_text(std::vector<std::string> args) const;
    // The dump jobs of pid, oldest first.
    std::vector<wire::json> dump_jobs(pid_t pid) const;
    // Waits (at most 120 s) until pid has n dump jobs, all ended.
    bool wait_for_dumps(pid_t pid, std::size_t n) const;

private:
    shared_dir dir_;
    std::unique_ptr<daemon::server> server_;
    std::thread thread_;
};

// Special characters of an ECMAScript regex escaped.
std::string regex_quote(const std::string& s);

// A selector of JVMs whose main class matches the glob and whose command line the regex matches
// (compiled here).
daemon::jvm_selector selector(const std::string& main_class, const std::string& command);

}  // namespace heapd::test
