// Where the daemon logs: the choice from JOURNAL_STREAM (systemd.exec(5)), and, end to end, the
// journal entries heapd sends (native protocol) with their priorities, read from a socket this
// test puts at /run/systemd/journal/socket in a mount namespace of heapd's own.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/syslog_sink.h>
#include <spdlog/sinks/systemd_sink.h>

#include "daemon/runtime/daemon_log.h"
#include "daemon/runtime/log_destination.h"
#include "support/datagram_receiver.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

using daemon::log_destination;

std::string dev_ino(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return "";
    return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
}

// Sets JOURNAL_STREAM for one test, restoring it after.
class journal_stream_env {
public:
    explicit journal_stream_env(const char* value) {
        if (const char* old = std::getenv("JOURNAL_STREAM")) old_ = old;
        if (value != nullptr)
            ::setenv("JOURNAL_STREAM", value, 1);
        else
            ::unsetenv("JOURNAL_STREAM");
    }
    ~journal_stream_env() {
        if (old_.empty())
            ::unsetenv("JOURNAL_STREAM");
        else
            ::setenv("JOURNAL_STREAM", old_.c_str(), 1);
    }

private:
    std::string old_;
};

TEST(log_destination, journal_only_when_journal_stream_names_stderr) {
    const std::string stderr_id = dev_ino(STDERR_FILENO), stdin_id = dev_ino(STDIN_FILENO);
    ASSERT_FALSE(stderr_id.empty());
    {
        journal_stream_env env(stderr_id.c_str());
        EXPECT_TRUE(daemon::stderr_is_journal());
        EXPECT_EQ(daemon::choose_log_destination(true), log_destination::journal);
        EXPECT_EQ(daemon::choose_log_destination(false), log_destination::journal);
    }
    for (const char* other : {static_cast<const char*>(nullptr), "", "12", "1:2x", ":", "0:0"}) {
        journal_stream_env env(other);
        EXPECT_FALSE(daemon::stderr_is_journal()) << (other ? other : "(unset)");
        EXPECT_EQ(daemon::choose_log_destination(true), log_destination::stderr_text);
        EXPECT_EQ(daemon::choose_log_destination(false), log_destination::syslog);
    }
    if (stdin_id != stderr_id) {
        // A stream to the journal that is not stderr (stderr redirected by a child): not the journal.
        journal_stream_env env(stdin_id.c_str());
        EXPECT_FALSE(daemon::stderr_is_journal());
    }
}

TEST(log_destination, make_logger_uses_the_sink_chosen) {
    const std::string stderr_id = dev_ino(STDERR_FILENO);
    {
        journal_stream_env env(stderr_id.c_str());
        auto log = daemon::make_logger(true);
        ASSERT_EQ(log->sinks().size(), 1u);
        EXPECT_NE(std::dynamic_pointer_cast<spdlog::sinks::systemd_sink_mt>(log->sinks()[0]), nullptr);
    }
    journal_stream_env env(nullptr);
    EXPECT_NE(std::dynamic_pointer_cast<spdlog::sinks::stderr_color_sink_mt>(daemon::make_logger(true)->sinks()[0]),
              nullptr);
    EXPECT_NE(std::dynamic_pointer_cast<spdlog::sinks::syslog_sink_mt>(daemon::make_logger(false)->sinks()[0]),
              nullptr);
}

// The fields of a native journal protocol datagram: KEY=VALUE lines, or KEY, newline, a 64-bit
// little-endian length and that many bytes for a value holding a newline.
std::map<std::string, std::string> journal_fields(const std::string& d) {
    std::map<std::string, std::string> fields;
    for (std::size_t at = 0; at < d.size();) {
        const std::size_t end = d.find('\n', at);
        if (end == std::string::npos) break;
        const std::string line = d.substr(at, end - at);
        if (auto eq = line.find('='); eq != std::string::npos) {
            fields[line.substr(0, eq)] = line.substr(eq + 1);
            at = end + 1;
            continue;
        }
        std::uint64_t length = 0;
        if (end + 1 + 8 > d.size()) break;
        std::memcpy(&length, d.data() + end + 1, 8);
        fields[line] = d.substr(end + 9, length);
        at = end + 9 + length + 1;
    }
    return fields;
}

TEST(log_destination, under_systemd_heapd_logs_to_the_journal_with_priorities) {
    // The journal's socket, mounted over /run/systemd in a mount namespace of heapd's own.
    shared_dir run_systemd;
    std::filesystem::create_directory(run_systemd.file("journal"));
    datagram_receiver journal(run_systemd.file("journal/socket"));
    ASSERT_TRUE(journal.ok());
    // JOURNAL_STREAM names heapd's stderr (the log file serve_process gives it), as systemd does
    // when it connects stderr to the journal.
    const std::string script = "mkdir -p /run/systemd && mount --bind " + run_systemd.path() +
                               " /run/systemd && JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec \"$@\"";
    serve_process d({"--group", "heapd-test-no-such-group"},
                    {"unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh"});
    ASSERT_TRUE(d.ready()) << d.log();
    EXPECT_EQ(d.stop(SIGTERM), 0) << d.log();

    std::vector<std::map<std::string, std::string>> entries;
    for (const datagram& g : journal.received()) entries.push_back(journal_fields(g.bytes));
    auto find = [&](const std::string& start) -> const std::map<std::string, std::string>* {
        for (const auto& e : entries)
            if (e.count("MESSAGE") && e.at("MESSAGE").starts_with(start)) return &e;
        return nullptr;
    };
    const auto* serving = find("serving on " + d.socket());
    ASSERT_NE(serving, nullptr) << d.log();
    EXPECT_EQ(serving->at("PRIORITY"), "6");  // LOG_INFO
    EXPECT_EQ(serving->at("SYSLOG_IDENTIFIER"), "heapd");
    const auto* no_group = find("group heapd-test-no-such-group does not exist");
    ASSERT_NE(no_group, nullptr);
    EXPECT_EQ(no_group->at("PRIORITY"), "4");  // LOG_WARNING
    ASSERT_NE(find("stopped"), nullptr);
    // Nothing went to stderr as text lines.
    EXPECT_EQ(d.log().find("serving on"), std::string::npos) << d.log();
}

}  // namespace
}  // namespace heapd::test
