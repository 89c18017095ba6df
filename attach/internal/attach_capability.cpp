#include "attach/internal/attach_capability.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attach/process_info.h"
#include "base/fd_io.h"
#include "formats/hsperf/hsperfdata.h"

namespace heapd::attach {
namespace {

constexpr std::size_t max_perf_file = hsperf_max_file_bytes;

// The whole of a small regular file, or nothing.
std::optional<std::string> slurp(const std::string& path, uid_t owner) {
    int fd = ::open(path.c_str(), O_RDONLY | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return std::nullopt;
    struct stat st {};
    std::optional<std::string> out;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == owner &&
        static_cast<std::size_t>(st.st_size) <= max_perf_file) {
        std::string data(static_cast<std::size_t>(st.st_size), '\0');
        std::size_t got = 0;
        while (got < data.size()) {
            ssize_t n = ::pread(fd, data.data() + got, data.size() - got, static_cast<off_t>(got));
            if (n <= 0) break;
            got += static_cast<std::size_t>(n);
        }
        data.resize(got);
        out = std::move(data);
    }
    ::close(fd);
    return out;
}

// The hsperfdata file of the target: <its /tmp>/hsperfdata_<user>/<ns pid>, owned by its euid. The
// user name is the JVM's own (a container may name the uid differently), so every directory is tried.
std::optional<std::string> perf_file(const process_info& target) {
    std::string tmp = proc_path(target.pid, "root/tmp");
    DIR* dir = ::opendir(tmp.c_str());
    if (dir == nullptr) return std::nullopt;
    std::optional<std::string> found;
    while (dirent* e = ::readdir(dir)) {
        std::string_view name = e->d_name;
        if (!name.starts_with("hsperfdata_")) continue;
        found = slurp(tmp + "/" + std::string(name) + "/" + std::to_string(target.ns_pid), target.euid);
        if (found) break;
    }
    ::closedir(dir);
    return found;
}

// The NUL-separated strings of a /proc file (cmdline, environ).
std::vector<std::string> nul_strings(const std::string& path) {
    std::vector<std::string> out;
    auto text = read_small_file(path, 1u << 20);
    if (!text) return out;
    for (std::size_t at = 0; at < text->size();) {
        std::size_t end = text->find('\0', at);
        if (end == std::string::npos) end = text->size();
        out.push_back(text->substr(at, end - at));
        at = end + 1;
    }
    return out;
}

// Applies every -XX:±DisableAttachMechanism among whitespace-separated options to `disabled`.
void scan_options(std::string_view text, std::optional<bool>& disabled) {
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n')) ++i;
        std::size_t start = i;
        while (i < text.size() && text[i] != ' ' && text[i] != '\t' && text[i] != '\n') ++i;
        std::string_view word = text.substr(start, i - start);
        if (word == "-XX:+DisableAttachMechanism") disabled = true;
        if (word == "-XX:-DisableAttachMechanism") disabled = false;
    }
}

}  // namespace

std::optional<std::string_view> perf_string(std::string_view b, std::string_view name) {
    auto perf = hsperf_data::parse(std::as_bytes(std::span(b.data(), b.size())));
    if (!perf) return std::nullopt;
    auto snapshot = perf->snapshot();
    if (!snapshot) return std::nullopt;
    return snapshot->string_value(name);
}

std::optional<bool> attach_disabled(const process_info& target) {
    if (auto perf = perf_file(target))
        if (auto caps = perf_string(*perf, "sun.rt.jvmCapabilities"); caps && !caps->empty()) return (*caps)[0] != '1';
    // No hsperfdata (-XX:-UsePerfData, or a private /tmp we cannot read): the options it was given.
    std::string base = proc_path(target.pid) + "/";
    auto cmdline = nul_strings(base + "cmdline");
    auto environ = nul_strings(base + "environ");
    if (cmdline.empty()) return std::nullopt;
    std::optional<bool> disabled;
    auto from_env = [&](std::string_view var) {
        for (const auto& e : environ)
            if (e.size() > var.size() && e.starts_with(var) && e[var.size()] == '=')
                scan_options(std::string_view(e).substr(var.size() + 1), disabled);
    };
    // The order HotSpot reads them in: JAVA_TOOL_OPTIONS, the launcher's JDK_JAVA_OPTIONS, the
    // command line, then _JAVA_OPTIONS.
    from_env("JAVA_TOOL_OPTIONS");
    from_env("JDK_JAVA_OPTIONS");
    for (const auto& arg : cmdline) {
        if (arg == "-XX:+DisableAttachMechanism") disabled = true;
        if (arg == "-XX:-DisableAttachMechanism") disabled = false;
    }
    from_env("_JAVA_OPTIONS");
    return disabled.value_or(false);
}

}  // namespace heapd::attach
