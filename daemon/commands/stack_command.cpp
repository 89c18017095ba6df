// `heapd stack PID [--native]`: the JVM's thread dump, or native stacks read with ptrace and
// libunwind when the JVM cannot answer (or when asked for them), or, for a JVM that takes no attach,
// its Java stacks read by its JDK's serviceability agent.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "attach/process_info.h"
#include "attach/process_snapshot.h"
#include "base/fd_io.h"
#include "base/safe_text.h"
#include "base/unique_fd.h"
#include "daemon/commands/commands.h"
#include "daemon/commands/thread_dump.h"
#include "daemon/stacks/native_stacks.h"

namespace heapd::cmd {
namespace {

// The options of one stack invocation.
struct stack_args {
    int pid = 0;
    bool native = false;
    double timeout_seconds = 10;
    bool json = false;
    unsigned max_frames = 256;
};

const char* state_name(char state) {
    switch (state) {
    case 'R': return "running";
    case 'S': return "sleeping";
    case 'D': return "uninterruptible sleep";
    case 'T': return "stopped";
    case 't': return "tracing stop";
    case 'Z': return "zombie";
    case 'I': return "idle";
    default: return "unknown";
    }
}

std::string base_name(const std::string& path) {
    auto slash = path.rfind('/');
    return path[0] == '/' && slash != std::string::npos ? path.substr(slash + 1) : path;
}

std::string hex(std::uint64_t v, int width = 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%0*" PRIx64, width, v);
    return buf;
}

// One frame as a line: "#3  0x00007f...  JVM_Sleep+0x12a  (libjvm.so)".
std::string frame_line(std::size_t index, const stacks::native_frame& f) {
    std::string what;
    if (!f.symbol.empty()) {
        what = f.symbol + "+" + hex(f.symbol_offset) + "  (" + base_name(f.module) +
               (f.symbol_source == "perf-map" ? ", perf map" : "") + ")";
    } else if (!f.module.empty() && f.module[0] == '/') {
        what = base_name(f.module) + "+" + hex(f.module_offset);
    } else {
        what = "??  (" + (f.module.empty() ? std::string("unmapped") : f.module) + ")";
    }
    char num[32];
    std::snprintf(num, sizeof num, "  #%-3zu ", index);
    return num + hex(f.ip, 12) + "  " + what + "\n";
}

std::string render_text(const stacks::native_stacks& s, const std::string& fallback_reason) {
    std::string out;
    if (!fallback_reason.empty()) out += "# The JVM did not answer (" + fallback_reason + "): native stacks instead.\n";
    char head[256];
    std::snprintf(head, sizeof head, "Native stacks of process %d (%s): %zu threads, stopped for %.1f ms.\n", s.pid,
                  s.process_name.c_str(), s.threads.size(), s.stopped_for.count() / 1000.0);
    out += head;
    if (s.was_stopped) out += "The process was stopped (SIGSTOP) before and is left stopped.\n";
    if (s.exited_threads > 0)
        out += std::to_string(s.exited_threads) + " thread(s) exited while the process was being stopped.\n";
    for (const stacks::native_thread& t : s.threads) {
        out += "\n\"" + t.name + "\" tid " + std::to_string(t.tid) + ", " + state_name(t.state);
        if (t.pending_signal != 0) out += ", receiving signal " + std::to_string(t.pending_signal);
        out += "\n";
        for (std::size_t i = 0; i < t.frames.size(); ++i) out += frame_line(i, t.frames[i]);
        if (!t.error.empty()) out += "  (" + t.error + ")\n";
    }
    return out;
}

nlohmann::json render_json(const stacks::native_stacks& s, const std::string& fallback_reason) {
    nlohmann::json threads = nlohmann::json::array();
    for (const stacks::native_thread& t : s.threads) {
        nlohmann::json frames = nlohmann::json::array();
        for (const stacks::native_frame& f : t.frames) {
            nlohmann::json j = {{"ip", f.ip}, {"module", f.module}};
            if (!f.module.empty() && f.module[0] == '/') j["module_offset"] = f.module_offset;
            if (!f.symbol.empty()) {
                j["symbol"] = f.symbol;
                j["symbol_offset"] = f.symbol_offset;
                j["symbol_source"] = f.symbol_source;
            }
            frames.push_back(std::move(j));
        }
        nlohmann::json j = {{"tid", t.tid}, {"name", t.name}, {"state", std::string(1, t.state)}, {"frames", frames}};
        if (t.pending_signal != 0) j["pending_signal"] = t.pending_signal;
        if (!t.error.empty()) j["error"] = t.error;
        threads.push_back(std::move(j));
    }
    nlohmann::json out = {{"pid", s.pid},
                          {"source", "native"},
                          {"process_name", s.process_name},
                          {"was_stopped", s.was_stopped},
                          {"stopped_ms", s.stopped_for.count() / 1000.0},
                          {"exited_threads", s.exited_threads},
                          {"threads", threads}};
    if (!fallback_reason.empty()) out["fallback_reason"] = fallback_reason;
    return out;
}

// Thread names are the JVM owner's to choose: escaped for the terminal.
void print(const std::string& text) {
    const std::string safe = terminal_safe(text);
    std::fwrite(safe.data(), 1, safe.size(), stdout);
}

void print_json(const nlohmann::json& j) {
    print(j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

int run_native(const stack_args& a, std::chrono::milliseconds timeout, const std::string& fallback_reason) {
    stacks::native_stack_options options;
    options.timeout = timeout;
    options.max_frames = a.max_frames;
    auto s = stacks::capture_native_stacks(a.pid, options);
    if (!s) {
        std::fprintf(stderr, "heapd: native stacks of process %d: %s\n", a.pid, s.error().message.c_str());
        return bad_input;
    }
    if (a.json)
        print_json(render_json(*s, fallback_reason));
    else
        print(render_text(*s, fallback_reason));
    return ok;
}

// The Java stacks of a JVM that takes no attach, read from outside by its own JDK's serviceability
// agent (jhsdb jstack); only for a JVM that sees our filesystem (its JDK runs here, as its owner).
int run_from_outside(const stack_args& a, std::chrono::milliseconds timeout, const std::string& reason) {
    auto info = attach::read_process_info(a.pid);
    std::error_code ec;
    const std::string exe = std::filesystem::read_symlink("/proc/" + std::to_string(a.pid) + "/exe", ec).string();
    if (!info || ec || !attach::same_filesystem_view(a.pid)) {
        std::fprintf(stderr, "heapd: process %d: %s; --native reads its native stacks\n", a.pid, reason.c_str());
        return bad_input;
    }
    unique_fd out(::memfd_create("heapd-stacks", MFD_CLOEXEC));
    const auto seconds = std::chrono::seconds(std::max<long long>(5, timeout.count() / 1000));
    auto read = out ? attach::java_stacks_from_outside({a.pid, info->euid, info->egid, exe}, out.get(), seconds)
                    : result<void>(fail(error_code::io, "memfd_create failed"));
    std::optional<std::string> text;
    if (read && ::lseek(out.get(), 0, SEEK_SET) == 0) text = read_to_end(out.get(), std::size_t{16} << 20);
    if (!read || !text) {
        std::fprintf(stderr, "heapd: process %d: %s, and its stacks could not be read from outside: %s\n", a.pid,
                     reason.c_str(), read ? "reading them failed" : read.error().message.c_str());
        return bad_input;
    }
    if (a.json)
        print_json(
            {{"pid", a.pid}, {"source", "serviceability agent"}, {"fallback_reason", reason}, {"thread_dump", *text}});
    else
        print("# The JVM takes no attach (" + reason + "): its Java stacks read by the serviceability agent.\n" +
              *text);
    return ok;
}

int run_stack(const stack_args& a) {
    auto timeout = std::chrono::milliseconds(static_cast<long long>(a.timeout_seconds * 1000));
    if (a.native) return run_native(a, timeout, {});
    auto dump = java_thread_dump(a.pid, timeout);
    if (dump) {
        if (a.json)
            print_json({{"pid", a.pid}, {"source", "jvm"}, {"thread_dump", *dump}});
        else
            print(*dump);
        return ok;
    }
    if (dump.error().code == error_code::attach_disabled) return run_from_outside(a, timeout, dump.error().message);
    if (dump.error().code != error_code::not_responding) {
        std::fprintf(stderr, "heapd: process %d: %s (%s)%s\n", a.pid, dump.error().message.c_str(),
                     error_code_name(dump.error().code),
                     dump.error().code == error_code::no_such_process ? "" : "; --native reads its native stacks");
        return bad_input;
    }
    std::fprintf(stderr, "heapd: process %d: the JVM did not answer: %s; reading native stacks instead\n", a.pid,
                 dump.error().message.c_str());
    return run_native(a, timeout, dump.error().message);
}

}  // namespace

void add_stack(CLI::App& app, int& status) {
    auto args = std::make_shared<stack_args>();
    CLI::App* sub = app.add_subcommand(
        "stack", "Thread stacks of a process: the JVM's thread dump, or native stacks when it cannot answer");
    sub->add_option("pid", args->pid, "Process id")->required()->check(CLI::PositiveNumber);
    sub->add_flag("--native", args->native,
                  "Read native stacks with ptrace and libunwind (stops the process briefly) instead of asking the JVM");
    sub->add_option("--timeout", args->timeout_seconds,
                    "Seconds allowed for the JVM's answer, and again for reading native stacks")
        ->check(CLI::Range(0.1, 3600.0))
        ->capture_default_str();
    sub->add_option("--max-frames", args->max_frames, "Native frames per thread at most")
        ->check(CLI::Range(1u, 100000u))
        ->capture_default_str();
    sub->add_flag("--json", args->json, "Print JSON for machines");
    sub->callback([args, &status] { status = run_stack(*args); });
}

}  // namespace heapd::cmd
