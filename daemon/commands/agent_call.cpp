#include "daemon/commands/agent_call.h"

#include <signal.h>
#include <time.h>

#include <atomic>
#include <cstdio>

#include "attach/agent_control.h"
#include "base/atomic_file.h"
#include "base/safe_text.h"
#include "daemon/commands/commands.h"

namespace heapd::cmd {
namespace {

std::atomic<bool> interrupted{false};

void on_signal(int) { interrupted = true; }

}  // namespace

std::expected<sites::allocation_profile, int> agent_call::run(const std::string& command) const {
    attach::attach_options options;
    options.timeout = std::chrono::milliseconds(static_cast<long long>(timeout_seconds * 1000));
    auto text = attach::agent_command(pid, {library}, command, sites::agent_protocol, options);
    if (!text) {
        std::fprintf(stderr, "heapd: %s %d: %s: %s\n", name.c_str(), static_cast<int>(pid),
                     error_code_name(text.error().code), text.error().message.c_str());
        return std::unexpected(text.error().code == error_code::agent_refused ? jvm_failed : attach_failed);
    }
    auto profile = sites::parse_allocation_profile(*text);
    if (profile && profile->has_tables && !save.empty()) {
        if (auto saved = write_file_atomic(save, *text, {0600}); !saved) {
            std::fprintf(stderr, "heapd: %s %d: --save %s: %s\n", name.c_str(), static_cast<int>(pid), save.c_str(),
                         saved.error().message.c_str());
            return std::unexpected(bad_input);
        }
    }
    if (!profile) {
        std::fprintf(stderr, "heapd: %s %d: %s\n", name.c_str(), static_cast<int>(pid),
                     profile.error().message.c_str());
        return std::unexpected(jvm_failed);
    }
    if (!profile->error.empty()) {
        std::fprintf(stderr, "heapd: %s %d: the agent: %s\n", name.c_str(), static_cast<int>(pid),
                     terminal_safe(profile->error).c_str());
        return std::unexpected(jvm_failed);
    }
    return std::move(*profile);
}

void wait_seconds(double seconds) {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    timespec until{};
    clock_gettime(CLOCK_MONOTONIC, &until);
    const auto ns = static_cast<long long>(seconds * 1e9);
    until.tv_sec += static_cast<time_t>(ns / 1000000000LL);
    until.tv_nsec += static_cast<long>(ns % 1000000000LL);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec += 1;
        until.tv_nsec -= 1000000000L;
    }
    while (!interrupted && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nullptr) != 0) {}
}

}  // namespace heapd::cmd
