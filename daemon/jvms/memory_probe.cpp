#include "daemon/jvms/memory_probe.h"

#include <charconv>
#include <chrono>
#include <string>

#include "attach/attach_client.h"
#include "attach/process_info.h"
#include "base/fd_io.h"
#include "daemon/jvms/jvm_facts.h"
#include "daemon/jvms/memory_cgroup.h"
#include "daemon/stacks/proc_files.h"

namespace heapd::daemon {
namespace {

// The stack pointer in /proc/PID/task/TID/syscall ("NR ARG1 ... ARG6 SP PC", or "-1 SP PC" for a
// thread blocked outside a system call); nothing for "running" or a thread gone.
std::optional<std::uint64_t> stack_pointer(pid_t pid, pid_t tid) {
    const auto text = read_small_file(attach::proc_path(pid, "task/" + std::to_string(tid) + "/syscall"), 512);
    if (!text || text->starts_with("running")) return std::nullopt;
    std::string_view t(*text);
    while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.remove_suffix(1);
    const std::size_t last = t.rfind(' ');
    if (last == std::string_view::npos) return std::nullopt;
    const std::size_t before = t.rfind(' ', last - 1);
    const std::string_view sp = t.substr(before == std::string_view::npos ? 0 : before + 1,
                                         last - (before == std::string_view::npos ? 0 : before + 1));
    if (!sp.starts_with("0x")) return std::nullopt;
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(sp.data() + 2, sp.data() + sp.size(), value, 16);
    if (ec != std::errc{} || end != sp.data() + sp.size()) return std::nullopt;
    return value;
}

// A diagnostic command's output, or a note of why there is none.
std::optional<std::string> ask(pid_t pid, const char* command, const memory_probe_options& o,
                               std::vector<std::string>& notes) {
    attach::attach_options a;
    a.timeout = o.attach_timeout;
    auto reply = attach::diagnostic_command(pid, command, a);
    if (!reply) {
        notes.push_back(std::string(command) + ": " + reply.error().describe());
        return std::nullopt;
    }
    if (reply->status != 0) {
        notes.push_back(std::string(command) + ": the JVM refused it (status " + std::to_string(reply->status) + ")");
        return std::nullopt;
    }
    return std::move(reply->output);
}

void ask_the_jvm(pid_t pid, const memory_probe_options& o, memory_inputs& in, std::vector<std::string>& notes) {
    if (auto text = ask(pid, "GC.heap_info", o, notes)) in.heap_info = parse_heap_info(*text);
    if (in.heap_info && !in.heap_info->metaspace_committed)  // JDK 21 and later: VM.metaspace's head
        if (auto text = ask(pid, "VM.metaspace", o, notes)) {
            const heap_info_figures m = parse_heap_info(*text);
            in.heap_info->metaspace_used = m.metaspace_used;
            in.heap_info->metaspace_committed = m.metaspace_committed;
            in.heap_info->metaspace_reserved = m.metaspace_reserved;
            in.heap_info->class_space_used = m.class_space_used;
            in.heap_info->class_space_committed = m.class_space_committed;
        }
    if (auto text = ask(pid, "Compiler.codecache", o, notes)) in.code_heaps = parse_code_heaps(*text);
    if (auto text = ask(pid, "VM.native_memory summary", o, notes)) in.nmt = parse_nmt_summary(*text);
}

}  // namespace

std::optional<memory_glance> glance_memory(pid_t pid) {
    const std::string rss = status_field(pid, "VmRSS");
    if (rss.empty()) return std::nullopt;  // gone, or a kernel thread
    memory_glance g;
    std::int64_t kib = 0;
    std::from_chars(rss.data(), rss.data() + rss.size(), kib);
    g.resident = kib * 1024;
    std::string note;
    g.limit = limit_of_process(pid, note);
    return g;
}

wire::json to_json(const memory_glance& g) {
    wire::json j = {{"resident", g.resident}, {"by_cgroup", g.limit.by_cgroup}};
    if (g.limit.bytes) {
        j["limit"] = *g.limit.bytes;
        if (*g.limit.bytes > 0)
            j["percent"] = 100.0 * static_cast<double>(g.resident) / static_cast<double>(*g.limit.bytes);
    }
    return j;
}

result<memory_breakdown> probe_memory(pid_t pid, const memory_probe_options& options) {
    auto info = attach::read_process_info(pid);
    if (!info) return std::unexpected(info.error());
    memory_inputs in;
    std::vector<std::string> notes;
    const auto smaps_text = read_small_file(attach::proc_path(pid, "smaps"), max_smaps_bytes);
    if (!smaps_text) return fail_errno("read", attach::proc_path(pid, "smaps"));
    auto mappings = parse_smaps(*smaps_text);
    if (!mappings) return std::unexpected(mappings.error());
    in.mappings = std::move(*mappings);
    for (const pid_t tid : list_tasks(pid)) {
        ++in.threads;
        if (const auto sp = stack_pointer(pid, tid)) in.stack_pointers.push_back(*sp);
    }
    if (auto facts = find_jvm_facts(pid); facts && facts->summary) {
        in.heap_committed = facts->summary->heap.capacity;
        in.heap_used = facts->summary->heap.used;
        in.heap_max = facts->summary->heap.max_capacity;
    } else {
        notes.push_back("hsperfdata: " + (facts ? facts->problem : facts.error().describe()));
    }
    if (options.attach) ask_the_jvm(pid, options, in, notes);
    memory_breakdown b = break_down(in);
    b.pid = pid;
    b.at_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
                  .count();
    std::string note;
    b.limit = limit_of_process(pid, note);
    if (!note.empty()) notes.push_back(note);
    b.notes.insert(b.notes.end(), notes.begin(), notes.end());
    if (!options.attach)
        b.notes.push_back(
            "not asked through attach: the heap's resident part is its used bytes at least, the code cache's is in "
            "other_native");
    return b;
}

}  // namespace heapd::daemon
