#include "daemon/oom/arm_jvm.h"

#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "attach/attach_client.h"
#include "attach/attach_session.h"
#include "attach/process_info.h"
#include "base/fd_io.h"
#include "base/unique_fd.h"
#include "daemon/jvms/jvm_facts.h"
#include "daemon/runtime/host_memory.h"
#include "daemon/stacks/proc_files.h"
#include "formats/report/quantities.h"

namespace heapd::daemon {
namespace {

// The JVM's /tmp: its free bytes, and whether it is a tmpfs (memory).
struct tmp_space {
    std::uint64_t free = 0;
    bool in_memory = false;
};
std::optional<tmp_space> jvm_tmp_space(pid_t pid) {
    unique_fd tmp(attach::open_jvm_tmp(pid));
    struct statfs st {};
    if (!tmp || ::fstatfs(tmp.get(), &st) != 0) return std::nullopt;
    return tmp_space{static_cast<std::uint64_t>(st.f_bavail) * static_cast<std::uint64_t>(st.f_bsize),
                     st.f_type == TMPFS_MAGIC};
}

arm_status not_armed(std::string why) {
    arm_status s;
    s.why = std::move(why);
    return s;
}

}  // namespace

wire::json to_json(const arm_status& s) {
    const char* state = s.state == arm_state::armed      ? "armed"
                        : s.state == arm_state::own_path ? "own_path"
                                                         : "not_armed";
    return {{"state", state}, {"dump_path", s.dump_path}, {"note", s.why}, {"collected", s.collected}};
}

bool oom_hook_running(pid_t pid) {
    const std::string base = attach::proc_path(pid, "task/");
    for (pid_t tid : list_tasks(pid)) {
        // HotSpot runs the OnOutOfMemoryError commands, one after the other, from its VM Thread.
        if (thread_name(pid, tid) != "VM Thread") continue;
        auto children = read_small_file(base + std::to_string(tid) + "/children", max_proc_file_bytes);
        return children && children->find_first_of("0123456789") != std::string::npos;
    }
    return false;
}

std::string armed_dump_prefix(pid_t ns_pid, std::uint64_t start_time) {
    return "heapd-oom-" + std::to_string(ns_pid) + "-" + std::to_string(start_time) + "-";
}

bool is_armed_dump_name(std::string_view name, pid_t ns_pid, std::uint64_t start_time) {
    const std::string prefix = armed_dump_prefix(ns_pid, start_time);
    if (!name.starts_with(prefix)) return false;
    name.remove_prefix(prefix.size());
    if (name.size() < 16 + 6) return false;
    for (char c : name.substr(0, 16))
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    name.remove_prefix(16);
    if (!name.starts_with(".hprof")) return false;
    name.remove_prefix(6);
    if (name.empty()) return true;
    // HotSpot's second and later dumps to one path: .hprof.1, .hprof.2, ...
    if (name[0] != '.' || name.size() == 1 || name.size() > 11) return false;
    for (char c : name.substr(1))
        if (c < '0' || c > '9') return false;
    return true;
}

std::string armed_dump_tag(const hash_key& key, pid_t ns_pid, std::uint64_t start_time, uid_t uid) {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx",
                  static_cast<unsigned long long>(
                      keyed_hash(key, armed_dump_prefix(ns_pid, start_time) + "uid " + std::to_string(uid))));
    return text;
}

bool armed_dump_vouched(const hash_key& key, std::string_view name, pid_t ns_pid, std::uint64_t start_time, uid_t uid) {
    if (!is_armed_dump_name(name, ns_pid, start_time)) return false;
    return name.substr(armed_dump_prefix(ns_pid, start_time).size(), 16) ==
           armed_dump_tag(key, ns_pid, start_time, uid);
}

bool hook_runs_heapd(const oom_settings& oom) {
    // "heapd dump %p", "/usr/bin/heapd dump %p", in a list with other commands.
    for (std::size_t at = oom.on_error.find("heapd"); at != std::string::npos;
         at = oom.on_error.find("heapd", at + 1)) {
        const bool starts = at == 0 || oom.on_error[at - 1] == '/' || oom.on_error[at - 1] == ' ' ||
                            oom.on_error[at - 1] == ';' || oom.on_error[at - 1] == '\'' || oom.on_error[at - 1] == '"';
        const std::string_view rest = std::string_view(oom.on_error).substr(at + 5);
        if (starts && rest.starts_with(" dump")) return true;
    }
    return false;
}

std::optional<std::string> hook_socket(const oom_settings& oom) {
    const std::string_view text = oom.on_error;
    std::size_t at = text.find(" dump");
    for (; at != std::string_view::npos; at = text.find(" dump", at + 1)) {
        oom_settings one;
        one.on_error = std::string(text.substr(0, at + 5));
        if (hook_runs_heapd(one)) break;
    }
    if (at == std::string_view::npos) return std::nullopt;
    // The words of that command, up to the next command of the list.
    std::string_view rest = text.substr(at + 5);
    rest = rest.substr(0, std::min(rest.size(), rest.find_first_of(";&|\n")));
    auto word = [&]() -> std::string_view {
        while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
        const std::string_view w = rest.substr(0, std::min(rest.size(), rest.find(' ')));
        rest.remove_prefix(w.size());
        return w;
    };
    auto unquoted = [](std::string_view w) {
        if (w.size() >= 2 && (w.front() == '\'' || w.front() == '"') && w.back() == w.front())
            w = w.substr(1, w.size() - 2);
        return std::string(w);
    };
    for (std::string_view w = word(); !w.empty(); w = word()) {
        if (w == "--socket") return unquoted(word());
        if (w.starts_with("--socket=")) return unquoted(w.substr(9));
    }
    return std::nullopt;
}

bool hook_reaches(const oom_settings& oom, std::string_view socket_path, std::string_view bare_socket) {
    if (!hook_runs_heapd(oom)) return false;
    const auto named = hook_socket(oom);
    return named ? *named == socket_path : bare_socket == socket_path;
}

std::optional<std::string> printed_flag_value(std::string_view output, std::string_view name) {
    while (!output.empty() && (output.back() == '\n' || output.back() == '\r')) output.remove_suffix(1);
    if (!output.starts_with("-XX:")) return std::nullopt;
    output.remove_prefix(4);
    if ((output.starts_with('+') || output.starts_with('-')) && output.substr(1) == name)
        return output[0] == '+' ? "true" : "false";
    if (output.starts_with(name) && output.substr(name.size()).starts_with('='))
        return std::string(output.substr(name.size() + 1));
    return std::nullopt;
}

namespace {

// Why the JVM's /tmp cannot take a dump of a heap of heap_max bytes (0: not known), if it cannot.
std::optional<std::string> no_room_for_dump(pid_t pid, std::uint64_t heap_max) {
    auto room = jvm_tmp_space(pid);
    if (!room) return "cannot tell the free space of its /tmp";
    if (heap_max != 0 && room->free < heap_max)
        return "its /tmp has " + text::human_bytes(room->free) + " free, less than its heap may hold (" +
               text::human_bytes(heap_max) + ")";
    // A tmpfs keeps the dump in memory, at the moment memory is short: only when the host has it.
    if (const std::uint64_t available = host_memory_available();
        room->in_memory && heap_max != 0 && available < heap_max)
        return "its /tmp is a tmpfs and the host has " + text::human_bytes(available) +
               " of memory available, less than its heap may hold (" + text::human_bytes(heap_max) + ")";
    return std::nullopt;
}

}  // namespace

arm_status arm_jvm(pid_t pid, pid_t ns_pid, std::uint64_t start_time, std::uint64_t heap_max, std::string_view tag,
                   std::string_view socket_path, const attach::attach_options& options) {
    auto read_flag = [&](std::string_view name) -> result<std::string> {
        auto reply = attach::print_flag(pid, name, options);
        if (!reply) return std::unexpected(reply.error());
        auto value = reply->status == 0 ? printed_flag_value(reply->output, name) : std::nullopt;
        if (!value)
            return fail(error_code::protocol, "printflag " + std::string(name) + " answered " +
                                                  std::to_string(reply->status) + ": " + reply->output.substr(0, 200));
        return *value;
    };
    auto set = [&](std::string_view name, std::string_view value) -> std::optional<std::string> {
        auto reply = attach::set_flag(pid, name, value, options);
        if (!reply) return reply.error().message;
        if (reply->status != 0) return "setflag " + std::string(name) + " refused: " + reply->output.substr(0, 200);
        return std::nullopt;
    };
    auto hook = read_flag("OnOutOfMemoryError");
    if (!hook) return not_armed(hook.error().message);
    oom_settings exact;
    exact.on_error = *hook;
    const bool collected = !hook_runs_heapd(exact);
    if (!collected && !hook_reaches(exact, socket_path, bare_hook_socket(pid))) {
        arm_status elsewhere;
        elsewhere.another_daemons = true;
        elsewhere.why = "its hook hands its dump to another daemon";
        return elsewhere;
    }
    auto on = read_flag("HeapDumpOnOutOfMemoryError");
    if (!on) return not_armed(on.error().message);
    auto path = read_flag("HeapDumpPath");
    if (!path) return not_armed(path.error().message);

    const std::string ours = "/tmp/" + armed_dump_prefix(ns_pid, start_time);
    arm_status s;
    s.collected = collected;
    if (!path->empty() && !path->starts_with(ours)) {
        // The user's own path: the JVM dumps there, and the hook adopts it from there.
        s.state = arm_state::own_path;
        s.dump_path = *path;
        if (*on == "true") {
            s.why = "dumps to its own HeapDumpPath";
            return s;
        }
        if (auto failed = set("HeapDumpOnOutOfMemoryError", "true")) return not_armed(*failed);
        s.why = "HeapDumpOnOutOfMemoryError set; its own HeapDumpPath kept";
        s.changed = true;
        return s;
    }
    if (!path->empty() && path->substr(ours.size(), tag.size()) == tag) {  // armed earlier under this store's key
        s.state = arm_state::armed;
        s.dump_path = *path;
        s.why = "armed earlier";
        if (*on == "true") return s;
        if (auto failed = set("HeapDumpOnOutOfMemoryError", "true")) return not_armed(*failed);
        s.why = "armed again (HeapDumpOnOutOfMemoryError had been turned off)";
        s.changed = true;
        return s;
    }
    if (*on == "true" && path->empty())  // dumps into its working directory, as the user asked
        return arm_status{arm_state::own_path, "", "dumps into its working directory", false, false, collected};
    if (heap_max == 0)  // no hsperfdata: the JVM says it
        if (auto max = read_flag("MaxHeapSize")) heap_max = std::strtoull(max->c_str(), nullptr, 10);
    if (auto why = no_room_for_dump(pid, heap_max)) return not_armed(*why);
    // Not armed yet, or under a key this store does not hold (another store, an older heapd): the
    // name tagged with ours, so that a dump spooled while the daemon is down is known again.
    const std::string chosen = ours + std::string(tag) + ".hprof";
    if (auto failed = set("HeapDumpPath", chosen)) return not_armed(*failed);
    if (auto failed = set("HeapDumpOnOutOfMemoryError", "true")) return not_armed(*failed);
    s.state = arm_state::armed;
    s.dump_path = chosen;
    s.why = "flags set";
    s.changed = true;
    return s;
}

}  // namespace heapd::daemon
