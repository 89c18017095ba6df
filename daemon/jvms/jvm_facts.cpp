#include "daemon/jvms/jvm_facts.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "attach/process_info.h"
#include "base/fd_io.h"
#include "base/safe_text.h"
#include "formats/hsperf/hsperfdata.h"

namespace heapd::daemon {

namespace {

// The NUL-separated strings of a small /proc file (cmdline, environ); empty when unreadable.
std::vector<std::string> nul_separated(const std::string& path) {
    std::vector<std::string> out;
    const std::string text = read_small_file(path, 1u << 20).value_or("");
    for (std::size_t at = 0; at < text.size();) {
        std::size_t end = text.find('\0', at);
        if (end == std::string::npos) end = text.size();
        out.push_back(text.substr(at, end - at));
        at = end + 1;
    }
    return out;
}

// Applies one JVM option to o.
void apply_oom_option(std::string_view a, oom_settings& o) {
    if (a == "-XX:+HeapDumpOnOutOfMemoryError")
        o.heap_dump = true;
    else if (a == "-XX:-HeapDumpOnOutOfMemoryError")
        o.heap_dump = false;
    else if (a == "-XX:+ExitOnOutOfMemoryError")
        o.exit = true;
    else if (a == "-XX:+CrashOnOutOfMemoryError")
        o.crash = true;
    else if (a.starts_with("-XX:HeapDumpPath="))
        o.heap_dump_path = std::string(a.substr(17));
    else if (a.starts_with("-XX:OnOutOfMemoryError="))
        o.on_error += (o.on_error.empty() ? "" : "; ") + std::string(a.substr(23));
}

}  // namespace

std::vector<std::string> command_line_of(pid_t pid) { return nul_separated(attach::proc_path(pid, "cmdline")); }

std::string bare_hook_socket(pid_t pid) {
    for (const std::string& e : nul_separated(attach::proc_path(pid, "environ")))
        if (e.starts_with("HEAPD_SOCKET=") && e.size() > 13) return e.substr(13);
    return wire::standard_socket_path;
}

std::string main_class_of(const std::vector<std::string>& argv) {
    for (std::size_t i = 1; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        if (a == "-jar" || a == "-m" || a == "--module")
            return i + 1 < argv.size() ? std::string(utf8_prefix(argv[i + 1], max_summary_text)) : "";
        if (a == "-cp" || a == "-classpath" || a == "--class-path" || a == "-p" || a == "--module-path" ||
            a == "--add-modules" || a == "--add-opens" || a == "--add-exports" || a == "--add-reads") {
            ++i;
            continue;
        }
        if (!a.starts_with('-')) return std::string(utf8_prefix(a, max_summary_text));
    }
    return {};
}

jvm_perf_summary summary_from_command_line(pid_t pid) {
    jvm_perf_summary s;
    const auto argv = command_line_of(pid);
    s.main_class = main_class_of(argv);
    // The first word equal to the main class (or jar) starts the command; "-jar" before it is neither.
    std::size_t start = argv.size();
    for (std::size_t i = 1; i < argv.size() && !s.main_class.empty(); ++i)
        if (utf8_prefix(argv[i], max_summary_text) == s.main_class) {
            start = i;
            break;
        }
    // As summarize() keeps hsperfdata's texts: max_summary_text bytes at most.
    auto join = [&](std::size_t from, std::size_t to) {
        std::string out;
        for (std::size_t i = from; i < to && out.size() < max_summary_text; ++i)
            out += (out.empty() ? "" : " ") + std::string(utf8_prefix(argv[i], max_summary_text));
        return std::string(utf8_prefix(out, max_summary_text));
    };
    const bool jar = start < argv.size() && argv[start - 1] == "-jar";
    s.vm_args = join(1, jar ? start - 1 : start);
    s.command = join(start, argv.size());
    return s;
}

oom_settings oom_settings_of(const jvm_facts& f) {
    if (f.summary) return f.summary->oom;
    oom_settings o;
    const std::string base = attach::proc_path(f.jvm.pid) + "/";
    // In the order HotSpot reads them: JAVA_TOOL_OPTIONS (split at blanks), then the command line.
    for (const std::string& e : nul_separated(base + "environ"))
        if (e.starts_with("JAVA_TOOL_OPTIONS=")) {
            std::string_view rest = std::string_view(e).substr(18);
            while (!rest.empty()) {
                const std::size_t end = std::min(rest.find(' '), rest.size());
                apply_oom_option(rest.substr(0, end), o);
                rest.remove_prefix(std::min(end + 1, rest.size()));
            }
        }
    const auto argv = command_line_of(f.jvm.pid);
    for (std::size_t i = 1; i < argv.size(); ++i) {
        if (!argv[i].starts_with('-')) break;  // the main class: what follows is the program's
        apply_oom_option(argv[i], o);
    }
    return o;
}

jvm_facts read_jvm_facts(const attach::discovered_jvm& jvm) {
    jvm_facts f{jvm, std::nullopt, {}};
    auto fd = attach::open_perfdata(jvm);
    if (!fd) {
        f.problem = fd.error().message;
        f.gone = fd.error().code == error_code::no_such_process;
        return f;
    }
    // Read into memory, never mapped: a file its owner truncated under a mapping would kill the
    // daemon with SIGBUS. hsperfdata files are tens of KiB; a bigger one is refused, never read whole.
    const auto too_big = [&] {
        f.problem = jvm.perfdata_path + ": larger than " + std::to_string(hsperf_max_file_bytes >> 20) +
                    " MiB (a JVM's is 32 KiB unless -XX:PerfDataMemorySize says more): not read";
        return f;
    };
    struct stat st {};
    if (::fstat(*fd, &st) == 0 && static_cast<std::uint64_t>(st.st_size) > hsperf_max_file_bytes) {
        ::close(*fd);
        return too_big();
    }
    auto bytes = read_to_end(*fd, hsperf_max_file_bytes + 1);
    ::close(*fd);
    if (!bytes) {
        f.problem = jvm.perfdata_path + ": cannot read it";
        return f;
    }
    if (bytes->size() > hsperf_max_file_bytes) return too_big();  // grown since fstat
    auto data = hsperf_data::parse(std::as_bytes(std::span(*bytes)));
    auto s = data ? summarize(*data) : std::unexpected(data.error());
    if (s)
        f.summary = std::move(*s);
    else
        f.problem = jvm.perfdata_path + ": " + s.error().describe();
    return f;
}

result<jvm_facts> find_jvm_facts(pid_t pid) {
    auto jvm = attach::find_jvm(pid);
    if (!jvm) return std::unexpected(jvm.error());
    return read_jvm_facts(*jvm);
}

wire::json to_json(const jvm_facts& f) {
    wire::json j = {{"pid", f.jvm.pid}, {"uid", f.jvm.uid}, {"user", f.jvm.user}, {"in_container", f.jvm.in_container}};
    if (!f.summary) {
        j["problem"] = f.problem;
        // A JVM without hsperfdata: what its command line says.
        if (f.jvm.perfdata_path.empty()) {
            const auto argv = command_line_of(f.jvm.pid);
            j["main_class"] = main_class_of(argv);
            std::string command;
            for (std::size_t i = 1; i < argv.size() && command.size() < max_summary_text; ++i)
                command += (i > 1 ? " " : "") + argv[i];
            j["command"] = std::string(utf8_prefix(command, max_summary_text));
            j["vm_version"] = "?";
        }
        return j;
    }
    const jvm_perf_summary& s = *f.summary;
    j["main_class"] = s.main_class;
    j["command"] = s.command;
    j["vm_version"] = s.vm_version;
    j["heap"] = {{"used", s.heap.used}, {"capacity", s.heap.capacity}, {"max", s.heap.max_capacity}};
    j["oom"] = {{"heap_dump", s.oom.heap_dump},
                {"heap_dump_path", s.oom.heap_dump_path},
                {"on_error", s.oom.on_error},
                {"exit", s.oom.exit}};
    return j;
}

}  // namespace heapd::daemon
