#include "daemon/jobs/analysis_child.h"
#include "daemon/jobs/analysis_memory.h"
#include "formats/wire/error_kinds.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "analysis/analysis.h"
#include "analysis/object_paths.h"
#include "base/child_process.h"
#include "base/unique_fd.h"
#include "formats/hprof/dump_file.h"
#include "formats/report/report_json.h"

namespace heapd::daemon {
namespace {

constexpr std::uint64_t max_report_bytes = std::uint64_t{1} << 30;

std::atomic<std::uint64_t> analysis_memory{0};

std::string memory_text(std::uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

std::string signal_text(int sig) {
    switch (sig) {
    case SIGBUS: return "SIGBUS: the file changed (was cut short?) while it was read";
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGKILL: return "SIGKILL (out of memory?)";
    default: return "signal " + std::to_string(sig);
    }
}

// Writes all of data to fd (the child's stdout); false when the parent is gone.
bool write_out(std::string_view data) {
    while (!data.empty()) {
        ssize_t n = ::write(STDOUT_FILENO, data.data(), data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

// Reads the child's stdout as it comes; tells the watch of totals and phases.
class child_reader {
public:
    explicit child_reader(const child_watch& w) : watch_(w) {}
    // Takes more bytes; false when what came cannot be read.
    bool feed(std::string_view bytes) {
        buffer_.append(bytes);
        for (;;) {
            if (report_bytes_) return true;  // the rest is the report
            auto nl = buffer_.find('\n');
            if (nl == std::string::npos) return buffer_.size() < 65536;
            std::string line = buffer_.substr(0, nl);
            buffer_.erase(0, nl + 1);
            if (line.starts_with("total ")) {
                if (watch_.total) watch_.total(std::strtoull(line.c_str() + 6, nullptr, 10));
            } else if (line.starts_with("phase ")) {
                if (watch_.phase) watch_.phase(std::string_view(line).substr(6));
            } else if (line.starts_with("within ")) {
                const unsigned long permille = std::strtoul(line.c_str() + 7, nullptr, 10);
                if (watch_.within) watch_.within(static_cast<double>(std::min(permille, 1000ul)) / 1000);
            } else if (line.starts_with("error ")) {
                auto space = line.find(' ', 6);
                auto code = error_code_from_name(std::string_view(line).substr(6, space - 6));
                if (!code) return false;
                failure_ = error_info{*code, space == std::string::npos ? "" : line.substr(space + 1)};
            } else if (line.starts_with("report ")) {
                report_bytes_ = std::strtoull(line.c_str() + 7, nullptr, 10);
                if (*report_bytes_ > max_report_bytes) return false;
            } else {
                return false;
            }
        }
    }
    bool report_complete() const { return report_bytes_ && buffer_.size() == *report_bytes_; }
    std::string take_report() { return std::move(buffer_); }
    const std::optional<error_info>& failure() const { return failure_; }

private:
    const child_watch& watch_;
    std::string buffer_;
    std::optional<std::uint64_t> report_bytes_;
    std::optional<error_info> failure_;
};

// Runs `heapd analyze-fd ARGS --parent PID` on dump_fd and reads what it writes.
result<std::string> run_child(int dump_fd, const child_scratch& scratch, std::vector<std::string> args,
                              const child_watch& watch, const std::string& executable) {
    args.insert(args.begin(), {"--inflate-dir", scratch.dir});
    const std::uint64_t memory = analysis_memory.load();
    if (memory != 0) args.insert(args.end(), {"--memory", std::to_string(memory)});
    if (scratch.max_bytes) args.insert(args.end(), {"--max-inflated", std::to_string(*scratch.max_bytes)});
    args.insert(args.end(), {"--disk-reserve", std::to_string(scratch.reserve.floor), "--disk-reserve-percent",
                             std::to_string(scratch.reserve.percent)});
    // Made here, by the daemon, for the unprivileged child to inflate into (it could create nothing
    // in the store's scratch directory itself); unlinked, so it goes with the last descriptor.
    unique_fd scratch_file(unlinked_temp_file(scratch.dir));
    // And one for its big arrays to spill to when memory is short (analysis_memory.h): the same
    // room bounds both.
    unique_fd spill_file(unlinked_temp_file(scratch.dir));
    if (!scratch_file || !spill_file) return fail_errno("cannot make a scratch file in", scratch.dir);
    const std::string parent = std::to_string(::getpid());
    args.insert(args.begin(), {"heapd", "analyze-fd"});
    args.insert(args.end(), {"--parent", parent});
    // The dump as 3, the scratch file as 4, the spill file as 5; no client socket, lock or log goes
    // along. Its own process group: a Ctrl-C meant for a foreground daemon is the daemon's to handle.
    auto child =
        child_process::spawn({executable, args, std::nullopt, {dump_fd, scratch_file.get(), spill_file.get()}, true});
    scratch_file.reset();
    spill_file.reset();
    if (!child) return fail(child.error().code, "cannot start the analysis process: " + child.error().message);
    child_reader reader(watch);
    child_limits limits;
    limits.cancelled = watch.cancelled;
    limits.tick = std::chrono::milliseconds(100);
    const child_read_end end =
        child->read(limits, [&](std::string_view bytes, std::vector<unique_fd>&) { return reader.feed(bytes); });
    const child_exit exit = child->wait();
    const bool cancelled = end == child_read_end::cancelled, garbled = end == child_read_end::stopped;
    if (cancelled || (watch.cancelled && watch.cancelled())) return fail(error_code::cancelled, "cancelled");
    if (garbled) return fail(error_code::internal, "the analysis process wrote nonsense");
    if (exit.signal != 0)
        return fail(error_code::crashed,
                    "the analysis process died of " + signal_text(exit.signal) +
                        (memory != 0 && exit.signal == SIGABRT
                             ? " (most likely out of memory: daemon.analysis_memory allows " + memory_text(memory) + ")"
                             : ""));
    if (reader.failure()) return std::unexpected(*reader.failure());
    if (exit.code != 0 || !reader.report_complete())
        return fail(error_code::internal,
                    "the analysis process ended without a report (exit status " + std::to_string(exit.code) + ")");
    return reader.take_report();
}

// As root, becomes the unprivileged user nobody (no groups, no capabilities, no way back, not
// dumpable); keeps dying with the parent. Nothing to do for a daemon that is not root.
result<void> drop_privileges() {
    if (::geteuid() != 0) return {};
    uid_t uid = 65534;
    gid_t gid = 65534;
    if (const passwd* pw = ::getpwnam("nobody")) uid = pw->pw_uid, gid = pw->pw_gid;
    if (::setgroups(0, nullptr) != 0 || ::setresgid(gid, gid, gid) != 0 || ::setresuid(uid, uid, uid) != 0)
        return fail(error_code::permission_denied,
                    std::string("cannot become the user nobody: ") + std::strerror(errno));
    ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a change of credentials clears it
    return {};
}

// The child's error line (the code's name, then the message), then its exit status.
int fail_with(const error_info& e) {
    std::string message = e.describe();
    for (char& c : message)
        if (c == '\n') c = ' ';
    write_out(std::string("error ") + error_code_name(e.code) + " " + message + "\n");
    return 2;
}

// The child's work on its mapped dump: the report (or the paths to object) written to stdout.
int analyze_mapped(const dump_file& dumped, const std::string& name, std::optional<std::uint64_t> object,
                   unsigned roots) {
    const dump_file* dump = &dumped;
    if (!write_out("total " + std::to_string(dump->bytes().size()) + "\n")) return 1;
    if (object) {
        if (!write_out("phase paths\n")) return 1;
        auto paths = find_object_paths(dump->bytes(), *object, roots);
        if (!paths) return fail_with(paths.error());
        paths->file = name;
        std::string text = to_json(*paths).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        return write_out("report " + std::to_string(text.size()) + "\n") && write_out(text) ? 0 : 1;
    }
    analysis_options options;
    options.top = 0;
    options.largest = 100;
    options.all_retained_classes = true;  // diffs of stored reports compare every class
    options.file_name = name;
    options.bulk_reads_done = [&dump] { dump->release_resident(); };
    int told = 0;  // the last thousandths of the phase written
    options.phase_started = [&told](std::string_view phase) {
        told = 0;
        return write_out("phase " + std::string(phase) + "\n");
    };
    options.phase_progress = [&told](double done) {
        const int permille = static_cast<int>(std::clamp(done, 0.0, 1.0) * 1000);
        if (permille < told + 10) return;
        told = permille;
        (void)write_out("within " + std::to_string(permille) + "\n");
    };
    auto report = analyze_dump(dump->bytes(), options);
    if (!report) {
        if (report.error().code == error_code::cancelled) return 1;  // the parent stopped reading
        return fail_with(report.error());
    }
    if (!dump->inflate_warning().empty())
        report->problems.push_back({dump->inflate_warning(), dump->compressed_bytes(), true});
    std::string text = to_json(*report).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return write_out("report " + std::to_string(text.size()) + "\n") && write_out(text) ? 0 : 1;
}

}  // namespace

void set_analysis_memory(std::uint64_t bytes) { analysis_memory = bytes; }

result<std::string> analyze_in_child(int dump_fd, const std::string& name, const child_scratch& scratch,
                                     const child_watch& watch, const std::string& executable) {
    return run_child(dump_fd, scratch, {"--name", name}, watch, executable);
}

result<std::string> paths_in_child(int dump_fd, const std::string& name, const child_scratch& scratch,
                                   std::uint64_t object, unsigned roots, const child_watch& watch,
                                   const std::string& executable) {
    return run_child(dump_fd, scratch,
                     {"--name", name, "--object", std::to_string(object), "--roots", std::to_string(roots)}, watch,
                     executable);
}

int analyze_fd_main(const std::string& name, const std::string& inflate_dir, pid_t parent,
                    std::optional<std::uint64_t> object, unsigned roots, std::optional<std::uint64_t> max_inflated,
                    std::uint64_t memory, const disk_reserve& reserve) {
    // Dies with the daemon's worker thread; if that is already gone, stop now.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) return 1;
    // Of all processes, the kernel kills this one first when memory runs out (a big analysis).
    if (int fd = ::open("/proc/self/oom_score_adj", O_WRONLY | O_NOCTTY | O_CLOEXEC); fd >= 0) {
        (void)!::write(fd, "1000", 4);
        ::close(fd);
    }
    // Everything it needs is open (the dump, the scratch file): mapping, inflating and parsing what a
    // client sent need no privilege at all.
    if (auto dropped = drop_privileges(); !dropped) return fail_with({error_code::internal, dropped.error().message});
    if (::getppid() != parent) return 1;
    const int scratch = ::fcntl(4, F_GETFD) >= 0 ? 4 : -1;
    auto dump = dump_file::from_fd(3, name, {inflate_dir, scratch, max_inflated});
    ::close(3);
    if (scratch >= 0) ::close(scratch);
    if (!dump) return fail_with(dump.error());
    // The spill file (descriptor 5) stays open for the process's life: big arrays live in it.
    memory_plan plan;
    plan.limit = memory;
    plan.spill_file = ::fcntl(5, F_GETFD) >= 0 ? 5 : -1;
    if (max_inflated) plan.max_spilled = *max_inflated;
    plan.reserve = reserve;
    if (auto applied = apply_memory_plan(plan); !applied)
        return fail_with({error_code::internal, applied.error().message});
    try {
        return analyze_mapped(*dump, name, object, roots);
    } catch (const std::bad_alloc&) {
        // Its spill file lies in the store's scratch directory, beside inflated dumps.
        return fail_with(
            {error_code::out_of_memory,
             out_of_room_text("daemon.analysis_memory (" + memory_text(memory) + " beyond the dump)", inflate_dir)});
    }
}

}  // namespace heapd::daemon
