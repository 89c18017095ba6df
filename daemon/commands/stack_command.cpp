// `heapd stack PID [--native]`: the JVM's thread dump; for a JVM that takes no attach, its Java
// stacks read by its JDK's serviceability agent; for one that does not answer, native stacks read
// with ptrace and libunwind (also when asked for them) and, unless it is stopped, each Java thread's
// Java frames from the serviceability agent beside them.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <expected>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "attach/process_info.h"
#include "attach/process_snapshot.h"
#include "attach/thread_dump.h"
#include "base/fd_io.h"
#include "base/hex_text.h"
#include "base/safe_text.h"
#include "base/unique_fd.h"
#include "daemon/commands/commands.h"
#include "daemon/stacks/native_stacks.h"

namespace heapd::daemon {
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

// One frame as a line: "#3  0x00007f...  JVM_Sleep+0x12a  (libjvm.so)".
std::string frame_line(std::size_t index, const daemon::native_frame& f) {
    std::string what;
    if (!f.symbol.empty()) {
        what = f.symbol + "+" + hex_id(f.symbol_offset) + "  (" + base_name(f.module) +
               (f.symbol_source == "perf-map" ? ", perf map" : "") + ")";
    } else if (!f.module.empty() && f.module[0] == '/') {
        what = base_name(f.module) + "+" + hex_id(f.module_offset);
    } else {
        what = "??  (" + (f.module.empty() ? std::string("unmapped") : f.module) + ")";
    }
    char num[32];
    std::snprintf(num, sizeof num, "  #%-3zu ", index);
    return num + hex_id(f.ip, 12) + "  " + what + "\n";
}

// Each thread's lines in jhsdb jstack's output (its state, then " - Demo.idle() @bci=4, line=62"),
// by native thread id (the header's nid=0x...).
using java_frames = std::map<pid_t, std::vector<std::string>>;

java_frames java_frames_by_tid(const std::string& sa) {
    java_frames out;
    std::vector<std::string>* current = nullptr;
    std::size_t at = 0;
    while (at < sa.size()) {
        const std::size_t end = std::min(sa.find('\n', at), sa.size());
        const std::string line = sa.substr(at, end - at);
        at = end + 1;
        const auto nid = line.find(" nid=0x");
        if (line.starts_with('"') && nid != std::string::npos) {
            current = &out[static_cast<pid_t>(std::strtol(line.c_str() + nid + 7, nullptr, 16))];
        } else if (line.empty()) {
            current = nullptr;
        } else if (current != nullptr) {
            current->push_back(line);
        }
    }
    return out;
}

// Why a stack has its sources: when the JVM did not answer, and whether the agent named Java frames.
struct stack_sources {
    std::string fallback_reason;        // why the JVM was not asked, "" when it was not tried
    const java_frames* java = nullptr;  // Java frames by thread, read by the serviceability agent
    std::string java_problem;           // why there are none, when the agent was tried
};

std::string render_text(const daemon::native_stacks& s, const stack_sources& from) {
    std::string out;
    if (!from.fallback_reason.empty())
        out += "# The JVM did not answer (" + from.fallback_reason + "): native stacks instead" +
               (from.java != nullptr        ? ", with each Java thread's Java frames read by the serviceability agent"
                : from.java_problem.empty() ? ""
                                            : " (no Java frames: " + from.java_problem + ")") +
               ".\n";
    char head[256];
    std::snprintf(head, sizeof head, "Native stacks of process %d (%s): %zu threads, stopped for %.1f ms.\n", s.pid,
                  s.process_name.c_str(), s.threads.size(), s.stopped_for.count() / 1000.0);
    out += head;
    if (s.was_stopped) out += "The process was stopped (SIGSTOP) before and is left stopped.\n";
    if (s.exited_threads > 0)
        out += std::to_string(s.exited_threads) + " thread(s) exited while the process was being stopped.\n";
    for (const daemon::native_thread& t : s.threads) {
        out += "\n\"" + t.name + "\" tid " + std::to_string(t.tid) + ", " + state_name(t.state);
        if (t.pending_signal != 0) out += ", receiving signal " + std::to_string(t.pending_signal);
        out += "\n";
        for (std::size_t i = 0; i < t.frames.size(); ++i) out += frame_line(i, t.frames[i]);
        if (!t.error.empty()) out += "  (" + t.error + ")\n";
        if (from.java == nullptr) continue;
        if (auto j = from.java->find(t.tid); j != from.java->end()) {
            out += "  Java (serviceability agent):\n";
            for (const std::string& line : j->second) out += "  " + line + "\n";
        }
    }
    return out;
}

nlohmann::json render_json(const daemon::native_stacks& s, const stack_sources& from) {
    nlohmann::json threads = nlohmann::json::array();
    for (const daemon::native_thread& t : s.threads) {
        nlohmann::json frames = nlohmann::json::array();
        for (const daemon::native_frame& f : t.frames) {
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
        if (from.java != nullptr)
            if (auto java = from.java->find(t.tid); java != from.java->end()) j["java"] = java->second;
        threads.push_back(std::move(j));
    }
    nlohmann::json out = {{"pid", s.pid},
                          {"source", "native"},
                          {"process_name", s.process_name},
                          {"was_stopped", s.was_stopped},
                          {"stopped_ms", s.stopped_for.count() / 1000.0},
                          {"exited_threads", s.exited_threads},
                          {"threads", threads}};
    if (!from.fallback_reason.empty()) out["fallback_reason"] = from.fallback_reason;
    if (from.java != nullptr) out["java_source"] = "serviceability agent";
    if (!from.java_problem.empty()) out["java_problem"] = from.java_problem;
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

// The Java stacks of a JVM read from outside by its own JDK's serviceability agent (jhsdb jstack),
// as its owner and, for a JVM in a container, in its namespaces; the text, or why it failed.
result<std::string> read_from_outside(pid_t pid, std::chrono::seconds timeout) {
    auto info = attach::read_process_info(pid);
    if (!info) return std::unexpected(info.error());
    std::error_code ec;
    const std::string exe = std::filesystem::read_symlink(attach::proc_path(pid, "exe"), ec).string();
    if (ec || exe.empty()) return fail(error_code::io, "its executable is unknown: " + ec.message());
    attach::snapshot_target target{pid, info->euid, info->egid, exe};
    if (!attach::same_filesystem_view(pid)) {
        target.in_container = true;
        target.ns_pid = info->ns_pid;
        target.start_time = info->start_time;
    }
    unique_fd out(::memfd_create("heapd-stacks", MFD_CLOEXEC));
    if (!out) return fail_errno("memfd_create", "heapd-stacks");
    auto read = attach::java_stacks_from_outside(target, out.get(), timeout);
    if (!read) return std::unexpected(read.error());
    std::optional<std::string> text;
    if (::lseek(out.get(), 0, SEEK_SET) == 0) text = read_to_end(out.get(), std::size_t{16} << 20);
    if (!text) return fail(error_code::io, "reading them failed");
    return *text;
}

// Seconds the serviceability agent is given: it starts a JVM of its own first.
std::chrono::seconds agent_time(std::chrono::milliseconds timeout) {
    return std::chrono::seconds(std::max<long long>(20, timeout.count() / 1000));
}

// Native stacks; for a JVM that did not answer (fallback_reason) and runs, also each Java thread's
// Java frames, read by the serviceability agent once the native stacks are taken.
int run_native(const stack_args& a, std::chrono::milliseconds timeout, const std::string& fallback_reason) {
    daemon::native_stack_options options;
    options.timeout = timeout;
    options.max_frames = a.max_frames;
    auto s = daemon::capture_native_stacks(a.pid, options);
    if (!s) {
        std::fprintf(stderr, "heapd: native stacks of process %d: %s\n", a.pid, s.error().message.c_str());
        return bad_input;
    }
    stack_sources from;
    from.fallback_reason = fallback_reason;
    java_frames java;
    if (!fallback_reason.empty() && !s->was_stopped) {
        if (auto text = read_from_outside(a.pid, agent_time(timeout))) {
            java = java_frames_by_tid(*text);
            from.java = &java;
        } else {
            from.java_problem = text.error().message;
        }
    }
    if (a.json)
        print_json(render_json(*s, from));
    else
        print(render_text(*s, from));
    return ok;
}

int run_stack(const stack_args& a) {
    auto timeout = std::chrono::milliseconds(static_cast<long long>(a.timeout_seconds * 1000));
    if (a.native) return run_native(a, timeout, {});
    auto dump = attach::java_thread_dump(a.pid, timeout);
    if (dump) {
        if (a.json)
            print_json({{"pid", a.pid}, {"source", "jvm"}, {"thread_dump", *dump}});
        else
            print(*dump);
        return ok;
    }
    const std::string& reason = dump.error().message;
    if (dump.error().code == error_code::attach_disabled) {
        auto text = read_from_outside(a.pid, agent_time(timeout));
        if (!text) {
            std::fprintf(stderr, "heapd: process %d: %s, and its stacks could not be read from outside: %s\n", a.pid,
                         reason.c_str(), text.error().message.c_str());
            return bad_input;
        }
        if (a.json)
            print_json({{"pid", a.pid},
                        {"source", "serviceability agent"},
                        {"fallback_reason", reason},
                        {"thread_dump", *text}});
        else
            print("# The JVM takes no attach (" + reason + "): its Java stacks read by the serviceability agent.\n" +
                  *text);
        return ok;
    }
    if (dump.error().code != error_code::not_responding) {
        std::fprintf(stderr, "heapd: process %d: %s (%s)%s\n", a.pid, reason.c_str(),
                     error_code_name(dump.error().code),
                     dump.error().code == error_code::no_such_process ? "" : "; --native reads its native stacks");
        return bad_input;
    }
    std::fprintf(stderr, "heapd: process %d: the JVM did not answer: %s; reading native stacks instead\n", a.pid,
                 reason.c_str());
    return run_native(a, timeout, reason);
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

}  // namespace heapd::daemon
