// heapctl's shared printing and argument checks (command_line.h).
#include <cstdio>
#include <ctime>

#include "base/safe_text.h"
#include "cli/command_line.h"

namespace heapd::cli {

exit_code complain(const std::string& message, exit_code code) {
    std::fprintf(stderr, "heapctl: %s\n", terminal_safe(message).c_str());
    return code;
}

exit_code complain(const client_error& e) { return complain(e.message, e.code); }

// Everything heapctl prints may hold names from a dump or another user's process: escaped for the terminal.
void print(const std::string& text) {
    const std::string safe = terminal_safe(text);
    std::fwrite(safe.data(), 1, safe.size(), stdout);
}

void print_json(const wire::json& j) { print(j.dump(2, ' ', false, wire::json::error_handler_t::replace) + "\n"); }

// Store ids are letters, digits and dashes; a file name with a slash or a dot is a file.
bool looks_like_dump_id(const std::string& s) {
    return !s.empty() &&
           s.find_first_not_of("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-") == std::string::npos;
}

// A JVM's pid: digits only (a file of that name, when there is one, wins).
bool is_pid(const std::string& s) {
    return !s.empty() && s.size() < 10 && s.find_first_not_of("0123456789") == std::string::npos && s != "0";
}

std::string dump_name(const wire::json& meta) {
    std::string text = meta.value("id", std::string("?"));
    const std::int64_t ms = meta.value("created_ms", std::int64_t{0});
    if (ms > 0) {
        std::time_t t = static_cast<std::time_t>(ms / 1000);
        std::tm tm{};
        char buf[32];
        if (::localtime_r(&t, &tm) != nullptr && std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm) > 0)
            text += std::string(" of ") + buf;
    }
    return text;
}

}  // namespace heapd::cli
