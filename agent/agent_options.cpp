#include "agent/agent_options.h"

#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <utility>

namespace heapd::agent {
namespace {

// A decimal number within [low, high], else false.
bool parse_number(std::string_view text, std::int64_t low, std::int64_t high, std::int64_t& out) {
    if (text.empty() || text.size() > 19) return false;
    std::int64_t value = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return false;
        value = value * 10 + (c - '0');
    }
    if (value < low || value > high) return false;
    out = value;
    return true;
}

// An answer file's name: /tmp/heapd-agent-<letters, digits, '-'>.json and nothing else.
bool valid_file(std::string_view path) {
    constexpr std::string_view prefix = "/tmp/heapd-agent-", suffix = ".json";
    if (!path.starts_with(prefix) || !path.ends_with(suffix) || path.size() > 200) return false;
    std::string_view middle = path.substr(prefix.size(), path.size() - prefix.size() - suffix.size());
    if (middle.empty()) return false;
    for (char c : middle)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-')) return false;
    return true;
}

}  // namespace

std::uint64_t own_start_time() {
    // Field 22 of /proc/self/stat, after the command's closing parenthesis (field 2 may hold spaces).
    char stat[1024] = {};
    if (FILE* f = std::fopen("/proc/self/stat", "r")) {
        std::size_t n = std::fread(stat, 1, sizeof stat - 1, f);
        stat[n] = '\0';
        std::fclose(f);
    }
    const char* at = std::strrchr(stat, ')');
    unsigned long long start = 0;
    for (int field = 2; at != nullptr && *at != '\0' && field < 22; ++at)
        if (*at == ' ') ++field;
    if (at != nullptr) start = std::strtoull(at, nullptr, 10);
    return start;
}

std::string oom_answer_path() {
    const std::uint64_t start = own_start_time();
    // 16 random hex digits: nobody can put a file (or a link) at the name first.
    unsigned char random[8] = {};
    for (std::size_t got = 0; got < sizeof random;) {
        const ssize_t n = ::getrandom(random + got, sizeof random - got, 0);
        if (n > 0)
            got += static_cast<std::size_t>(n);
        else if (errno != EINTR)
            break;
    }
    char hex[sizeof random * 2 + 1] = {};
    for (std::size_t i = 0; i < sizeof random; ++i) std::snprintf(hex + 2 * i, 3, "%02x", random[i]);
    return "/tmp/heapd-agent-oom-" + std::to_string(::getpid()) + "-" + std::to_string(start) + "-" + hex + ".json";
}

const char* command_name(command c) {
    switch (c) {
    case command::start: return "start";
    case command::show: return "show";
    case command::stop: return "stop";
    case command::status: return "status";
    case command::cpu_start: return "cpu_start";
    case command::cpu_show: return "cpu_show";
    case command::cpu_stop: return "cpu_stop";
    case command::oom: return "oom";
    }
    return "?";
}

bool parse_agent_options(const char* text, agent_options& out, std::string& error) {
    // The first error is kept and the rest is read all the same, so that an answer file named after
    // the error still gets it.
    auto note = [&error](std::string why) {
        if (error.empty()) error = std::move(why);
    };
    std::string_view rest = text == nullptr ? std::string_view{} : std::string_view{text};
    if (rest.size() > 1000) {
        note("the options are longer than 1000 bytes");
        rest = rest.substr(0, 1000);
    }
    // Reads value into out when it is a number within [low, high], else notes why.
    auto number = [&note](std::string_view value, std::int64_t low, std::int64_t high, const char* what,
                          auto& out_value) {
        std::int64_t n = 0;
        if (parse_number(value, low, high, n))
            out_value = static_cast<std::remove_reference_t<decltype(out_value)>>(n);
        else
            note(std::string(what) + " must be a number from " + std::to_string(low) + " to " + std::to_string(high));
    };
    bool first = true;
    while (first || !rest.empty()) {
        std::size_t comma = rest.find(',');
        std::string_view item = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
        if (first) {
            first = false;
            static constexpr std::pair<std::string_view, command> names[] = {
                {"start", command::start},       {"show", command::show},         {"stop", command::stop},
                {"status", command::status},     {"", command::status},           {"cpu_start", command::cpu_start},
                {"cpu_show", command::cpu_show}, {"cpu_stop", command::cpu_stop}, {"oom", command::oom}};
            bool known = false;
            for (const auto& [name, c] : names)
                if (item == name) {
                    out.what = c;
                    known = true;
                }
            if (!known)
                note("unknown command '" + std::string(item.substr(0, 40)) +
                     "' (start, show, stop, status, cpu_start, cpu_show, cpu_stop or oom)");
            continue;
        }
        std::size_t eq = item.find('=');
        std::string_view key = item.substr(0, eq);
        std::string_view value = eq == std::string_view::npos ? std::string_view{} : item.substr(eq + 1);
        if (key == "interval") {
            number(value, 0, max_interval, "interval (bytes)", out.interval);
        } else if (key == "depth") {
            number(value, 1, max_depth, "depth (frames)", out.depth);
        } else if (key == "period") {
            number(value, 1, max_period_ms, "period (milliseconds)", out.period_ms);
        } else if (key == "protocol") {
            number(value, 1, 1000, "protocol", out.protocol);
        } else if (key == "gc") {
            int gc = out.gc ? 1 : 0;
            number(value, 0, 1, "gc", gc);
            out.gc = gc == 1;
        } else if (key == "file") {
            if (valid_file(value))
                out.file = std::string(value);
            else
                note("file must be /tmp/heapd-agent-NAME.json (NAME of letters, digits and '-')");
        } else if (key == "wait") {
            number(value, 1, max_wait_s, "wait (seconds)", out.wait_s);
        } else if (key == "socket") {
            // sockaddr_un holds 107 bytes and a NUL.
            if (value.starts_with('/') && value.size() < 108)
                out.socket = std::string(value);
            else
                note("socket must be an absolute path of at most 107 bytes");
        } else {
            note("unknown option '" + std::string(key.substr(0, 40)) +
                 "' (interval, depth, gc, period, file, protocol, socket, wait)");
        }
    }
    return error.empty();
}

}  // namespace heapd::agent
