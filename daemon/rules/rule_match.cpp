#include "daemon/rules/rule_match.h"

#include <fnmatch.h>
#include <pwd.h>
#include <unistd.h>

#include <charconv>
#include <regex>
#include <vector>

#include "attach/process_info.h"
#include "daemon/jvms/container_identity.h"

namespace heapd::daemon {
namespace {

// The command pattern searched in text; false when it does not compile. std::regex reports bad
// patterns and pathological searches with exceptions, which end here.
bool command_matches(const jvm_selector& s, const std::string& text) {
    try {
        if (s.command_re) return std::regex_search(text, *s.command_re);
        return std::regex_search(text, std::regex(s.command, std::regex::ECMAScript));
    } catch (const std::exception&) {
        return false;
    }
}

bool user_matches(std::string_view wanted, uid_t uid, std::string_view name) {
    unsigned long number = 0;
    auto [end, ec] = std::from_chars(wanted.data(), wanted.data() + wanted.size(), number);
    if (ec == std::errc{} && end == wanted.data() + wanted.size()) return number == uid;
    return !name.empty() && name == wanted;
}

}  // namespace

std::string user_name_of(uid_t uid) {
    long size = ::sysconf(_SC_GETPW_R_SIZE_MAX);
    std::vector<char> buf(size > 0 ? static_cast<std::size_t>(size) : 16384);
    passwd pw{};
    passwd* found = nullptr;
    while (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == ERANGE && buf.size() < (1u << 20))
        buf.resize(buf.size() * 2);
    return found != nullptr && found->pw_name != nullptr ? std::string(found->pw_name) : std::string();
}

bool selects(const jvm_selector& s, const attach::discovered_jvm& jvm, const jvm_perf_summary& summary,
             std::string_view user_name) {
    if (!s.main_class.empty() && ::fnmatch(s.main_class.c_str(), summary.main_class.c_str(), 0) != 0) return false;
    if (!s.command.empty() || s.command_re) {
        std::string line = summary.vm_args;
        if (!line.empty() && !summary.command.empty()) line += ' ';
        line += summary.command;
        if (!command_matches(s, line)) return false;
    }
    if (!s.user.empty() && !user_matches(s.user, jvm.uid, user_name)) return false;
    if (s.container && *s.container != jvm.in_container) return false;
    if (!s.container_name.empty() || !s.pod.empty() || !s.pod_namespace.empty()) {
        auto info = attach::read_process_info(jvm.pid);
        if (!jvm.in_container || !info) return false;
        const container_identity c = container_of(jvm.pid, info->start_time);
        auto glob = [](const std::string& pattern, const std::string& text) {
            return pattern.empty() || (!text.empty() && ::fnmatch(pattern.c_str(), text.c_str(), 0) == 0);
        };
        if (!glob(s.container_name, !c.name.empty() ? c.name : c.hostname) || !glob(s.pod, c.pod) ||
            !glob(s.pod_namespace, c.pod_namespace))
            return false;
    }
    return true;
}

}  // namespace heapd::daemon
