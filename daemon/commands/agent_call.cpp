#include "daemon/commands/agent_call.h"

#include <cstdio>

#include "attach/agent_control.h"
#include "base/atomic_file.h"
#include "base/safe_text.h"
#include "daemon/commands/commands.h"

namespace heapd::daemon {
std::expected<sites::allocation_profile, wire::exits::exit_code> agent_call::run(const std::string& command) const {
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

}  // namespace heapd::daemon
