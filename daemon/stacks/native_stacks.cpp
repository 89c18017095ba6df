#include "daemon/stacks/native_stacks.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "attach/process_info.h"
#include "base/child_process.h"
#include "base/fd_io.h"
#include "daemon/stacks/native_unwind.h"
#include "daemon/stacks/proc_files.h"
#include "daemon/stacks/ptrace_stop.h"

namespace heapd::daemon {
namespace {

using clock = std::chrono::steady_clock;

// The capture's result as the tracing child sends it to its parent: length-prefixed fields.
class wire_writer {
public:
    void u64(std::uint64_t v) { bytes_.append(reinterpret_cast<const char*>(&v), sizeof v); }
    void str(const std::string& s) {
        u64(s.size());
        bytes_ += s;
    }
    const std::string& bytes() const { return bytes_; }

private:
    std::string bytes_;
};

// Reads what wire_writer wrote; any overrun marks the whole message bad.
class wire_reader {
public:
    explicit wire_reader(const std::string& bytes) : bytes_(bytes) {}
    std::uint64_t u64() {
        std::uint64_t v = 0;
        if (pos_ + sizeof v > bytes_.size()) {
            bad_ = true;
            return 0;
        }
        std::memcpy(&v, bytes_.data() + pos_, sizeof v);
        pos_ += sizeof v;
        return v;
    }
    std::string str() {
        std::uint64_t n = u64();
        if (bad_ || n > bytes_.size() - pos_) {
            bad_ = true;
            return {};
        }
        std::string s = bytes_.substr(pos_, n);
        pos_ += n;
        return s;
    }
    bool bad() const { return bad_; }

private:
    const std::string& bytes_;
    std::size_t pos_ = 0;
    bool bad_ = false;
};

constexpr std::uint64_t result_tag = 0x6865617064535431;  // "heapdST1": stacks follow
constexpr std::uint64_t error_tag = 0x6865617064455231;   // "heapdER1": an error follows

std::string encode(const native_stacks& s) {
    wire_writer w;
    w.u64(result_tag);
    w.u64(static_cast<std::uint64_t>(s.pid));
    w.str(s.process_name);
    w.u64(s.was_stopped);
    w.u64(static_cast<std::uint64_t>(s.stopped_for.count()));
    w.u64(s.exited_threads);
    w.u64(s.threads.size());
    for (const native_thread& t : s.threads) {
        w.u64(static_cast<std::uint64_t>(t.tid));
        w.str(t.name);
        w.u64(static_cast<unsigned char>(t.state));
        w.u64(static_cast<std::uint64_t>(t.pending_signal));
        w.str(t.error);
        w.u64(t.frames.size());
        for (const native_frame& f : t.frames) {
            w.u64(f.ip);
            w.str(f.symbol);
            w.u64(f.symbol_offset);
            w.str(f.symbol_source);
            w.str(f.module);
            w.u64(f.module_offset);
        }
    }
    return w.bytes();
}

std::string encode(const error_info& e) {
    wire_writer w;
    w.u64(error_tag);
    w.u64(static_cast<std::uint64_t>(e.code));
    w.str(e.message);
    return w.bytes();
}

result<native_stacks> decode(const std::string& bytes) {
    wire_reader r(bytes);
    auto broken = [] {
        return std::unexpected(error_info{error_code::io, "the tracing process sent a broken result"});
    };
    std::uint64_t tag = r.u64();
    if (tag == error_tag) {
        error_info e;
        e.code = static_cast<error_code>(r.u64());
        e.message = r.str();
        if (r.bad() || e.code > error_code::agent_refused) return broken();  // the last code
        return std::unexpected(std::move(e));
    }
    if (tag != result_tag) return broken();
    native_stacks s;
    s.pid = static_cast<pid_t>(r.u64());
    s.process_name = r.str();
    s.was_stopped = r.u64() != 0;
    s.stopped_for = std::chrono::microseconds(r.u64());
    s.exited_threads = static_cast<unsigned>(r.u64());
    std::uint64_t threads = r.u64();
    for (std::uint64_t i = 0; i < threads && !r.bad(); ++i) {
        native_thread t;
        t.tid = static_cast<pid_t>(r.u64());
        t.name = r.str();
        t.state = static_cast<char>(r.u64());
        t.pending_signal = static_cast<int>(r.u64());
        t.error = r.str();
        std::uint64_t frames = r.u64();
        for (std::uint64_t j = 0; j < frames && !r.bad(); ++j) {
            native_frame f;
            f.ip = r.u64();
            f.symbol = r.str();
            f.symbol_offset = r.u64();
            f.symbol_source = r.str();
            f.module = r.str();
            f.module_offset = r.u64();
            t.frames.push_back(std::move(f));
        }
        s.threads.push_back(std::move(t));
    }
    if (r.bad()) return broken();
    return s;
}

// The work of the tracing child: stop, unwind, release. Returns the encoded result.
std::string trace_and_unwind(pid_t pid, const native_stack_options& options) {
    // Stopping gets half the time: a thread that does not stop by then (in an uninterruptible
    // sleep) must not leave the others unread.
    const clock::time_point start = clock::now(), deadline = start + options.timeout;
    process_stop stop;
    if (auto stopped = stop.stop(pid, start + options.timeout / 2, options); !stopped) return encode(stopped.error());
    native_stacks out;
    out.pid = pid;
    out.process_name = thread_name(pid, pid);
    out.was_stopped = true;
    for (const auto& [tid, t] : stop.threads()) out.was_stopped = out.was_stopped && t.state_before == 'T';
    if (options.stage_hook) options.stage_hook(capture_stage::stopped, pid);
    {
        native_unwinder unwinder(pid);
        for (const auto& [tid, t] : stop.threads()) {
            if (t.gone && !t.stopped) continue;  // exited before it stopped: counted in exited()
            native_thread nt;
            nt.tid = tid;
            nt.name = thread_name(pid, tid);
            nt.state = t.state_before;
            nt.pending_signal = t.pending_signal;
            if (!t.stopped)
                nt.error = "did not stop within the time limit";
            else if (clock::now() >= deadline)
                nt.error = "not unwound: the time limit was reached";
            else
                nt.frames = unwinder.unwind(tid, options.max_frames, nt.error);
            char now = thread_state(pid, tid);
            if (now == '\0' || now == 'Z' || now == 'X') nt.error = "exited during the capture";
            out.threads.push_back(std::move(nt));
        }
    }
    stop.release();
    out.exited_threads = stop.exited();
    out.stopped_for = std::chrono::duration_cast<std::chrono::microseconds>(stop.released() - stop.started());
    if (out.threads.empty())
        return encode(
            error_info{error_code::no_such_process, "process " + std::to_string(pid) + " exited during the capture"});
    return encode(out);
}

// The most of the tracer's answer read: the stacks of 10,000 threads of 64 frames take a tenth.
constexpr std::size_t max_answer_bytes = std::size_t{256} << 20;

// What the tracer child is asked.
struct tracer_call {
    pid_t pid;
    pid_t parent;
    const native_stack_options* options;
};

// The tracer: dies with its parent, and the kernel then releases every thread it held.
int tracer_body(int channel, const void* context) {
    const tracer_call& call = *static_cast<const tracer_call*>(context);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != call.parent) return 1;
    write_all(channel, trace_and_unwind(call.pid, *call.options));
    return 0;
}

}  // namespace

result<native_stacks> capture_native_stacks(pid_t pid, const native_stack_options& options) {
    auto fail = [](error_code code, std::string message) {
        return std::unexpected(error_info{code, std::move(message)});
    };
    if (pid <= 0) return fail(error_code::no_such_process, "no process " + std::to_string(pid));
    if (::access(attach::proc_path(pid).c_str(), F_OK) != 0)
        return fail(error_code::no_such_process, "no process " + std::to_string(pid));
    if (pid == ::getpid()) return fail(error_code::permission_denied, "a process cannot trace itself");
    const tracer_call call{pid, ::getpid(), &options};
    auto child = child_process::fork(tracer_body, &call);
    if (!child) return std::unexpected(child.error());
    // The child keeps its own deadline; this one, a little later, catches a child that hangs.
    child_limits limits;
    limits.deadline = clock::now() + options.timeout + std::chrono::seconds(2);
    std::string bytes;
    // Never wait for a tracer that may still hold the process: past the deadline it is killed.
    const child_read_end end = child->read_all(limits, bytes, max_answer_bytes);
    const child_exit exit = child->wait();
    if (end == child_read_end::deadline)
        return fail(error_code::timed_out, "the stacks of process " + std::to_string(pid) +
                                               " could not be read within " + std::to_string(options.timeout.count()) +
                                               " ms; the tracer was killed, which released the process");
    if (bytes.empty()) return fail(error_code::io, "the tracing process " + exit.text() + " without a result");
    return decode(bytes);
}

}  // namespace heapd::daemon
