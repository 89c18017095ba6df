#include "daemon/oom/oom_hook.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <dirent.h>

#include "attach/attach_session.h"
#include "attach/process_info.h"
#include "attach/process_namespaces.h"
#include "base/unix_socket.h"
#include "daemon/jvms/jvm_facts.h"
#include "daemon/oom/arm_jvm.h"
#include "daemon/oom/oom_intake.h"

namespace heapd::daemon {
namespace {

using clock = std::chrono::steady_clock;

int remaining_ms(clock::time_point end) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - clock::now()).count();
    return left > 0 ? static_cast<int>(left) : 0;
}

// Waits for events on fd until end; false when the time ran out.
bool wait_for(int fd, short events, clock::time_point end) {
    pollfd p{fd, events, 0};
    for (;;) {
        int n = ::poll(&p, 1, remaining_ms(end));
        if (n > 0) return true;
        if (n == 0) return false;
        if (errno != EINTR) return false;
    }
}

}  // namespace

std::string oom_dump_name(const oom_settings& oom, pid_t ns_pid, bool path_is_directory) {
    const std::string file = "java_pid" + std::to_string(ns_pid) + ".hprof";
    if (oom.heap_dump_path.empty()) return file;
    if (path_is_directory) return oom.heap_dump_path + (oom.heap_dump_path.ends_with('/') ? "" : "/") + file;
    return oom.heap_dump_path;
}

std::string find_armed_dump(int dir, pid_t ns_pid, std::uint64_t start_time, uid_t uid, unique_fd& out,
                            std::size_t max_entries) {
    int listing = ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (listing < 0) return {};
    DIR* d = ::fdopendir(listing);
    if (d == nullptr) {
        ::close(listing);
        return {};
    }
    std::string best;
    struct timespec newest {};
    std::size_t seen = 0;
    while (dirent* e = ::readdir(d)) {
        if (++seen > max_entries) break;
        if (!is_armed_dump_name(e->d_name, ns_pid, start_time)) continue;
        unique_fd fd(::openat(dir, e->d_name, O_RDONLY | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
        struct stat st {};
        if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != uid) continue;
        if (!best.empty() && (st.st_mtim.tv_sec < newest.tv_sec ||
                              (st.st_mtim.tv_sec == newest.tv_sec && st.st_mtim.tv_nsec <= newest.tv_nsec)))
            continue;
        best = e->d_name;
        newest = st.st_mtim;
        out = std::move(fd);
    }
    ::closedir(d);
    return best;
}

oom_capture capture_oom(pid_t pid) {
    oom_capture c;
    c.pid = pid;
    c.args = {
        {"pid", pid}, {"trigger", "oom"}, {"in_oom_hook", true}, {"live", true}, {"request_id", new_request_id()}};
    auto info = attach::read_process_info(pid);
    if (info) c.args["start_time"] = info->start_time;
    // For a spooled request of a hook in a container: the namespaces its pid and paths belong to.
    if (auto ns = attach::own_pid_namespace()) c.args["pid_ns"] = ns->inode;
    if (auto ns = attach::mount_namespace_of(0)) c.args["mnt_ns"] = *ns;
    auto facts = find_jvm_facts(pid);
    if (!facts) {
        c.args["snapshot"] = true;
        c.args["wait"] = true;
        return c;
    }
    if (facts->summary) {
        c.args["jvm"] = facts->summary->vm_version;
        c.args["command"] = facts->summary->command;
    }
    // From hsperfdata, else (a JVM without it) from the command line.
    const oom_settings oom = oom_settings_of(*facts);
    // The JVM's own paths, seen through its root and working directory.
    const std::string proc = attach::proc_path(pid);
    auto seen = [&](const std::string& p) { return p.starts_with('/') ? proc + "/root" + p : proc + "/cwd/" + p; };
    auto adopt = [&](unique_fd fd, const std::string& name) {
        // For people and for the spool: the path as this host sees it.
        std::string host_path = name;
        std::error_code ec;
        if (!facts->jvm.in_container && !name.starts_with('/'))
            host_path = (std::filesystem::read_symlink(proc + "/cwd", ec) / name).lexically_normal().string();
        else if (facts->jvm.in_container)
            host_path = seen(name);
        c.args["dump_path"] = host_path;
        c.args["adopt"] = true;
        c.dump = std::move(fd);
    };
    // Where the JVM was told to dump (HeapDumpPath with HeapDumpOnOutOfMemoryError on the command
    // line; a HeapDumpPath alone when heapd turned the dump on).
    if (oom.heap_dump || !oom.heap_dump_path.empty()) {
        struct stat st {};
        const bool is_dir =
            !oom.heap_dump_path.empty() && ::stat(seen(oom.heap_dump_path).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
        const std::string name = oom_dump_name(oom, facts->jvm.ns_pid, is_dir);
        unique_fd fd(::open(seen(name).c_str(), O_RDONLY | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
        if (fd && ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode)) {
            adopt(std::move(fd), name);
            return c;
        }
    }
    // The dump heapd armed the JVM to write in its /tmp.
    // None: the daemon takes a snapshot while this hook holds the JVM, and says when it may go.
    auto no_dump = [&]() -> oom_capture {
        c.args["snapshot"] = true;
        c.args["wait"] = true;
        return std::move(c);
    };
    if (!info) return no_dump();
    unique_fd tmp(attach::open_jvm_tmp(pid));
    if (!tmp) return no_dump();
    unique_fd fd;
    std::string name = find_armed_dump(tmp.get(), facts->jvm.ns_pid, info->start_time, facts->jvm.uid, fd);
    if (name.empty()) return no_dump();
    adopt(std::move(fd), "/tmp/" + name);
    return c;
}

result<void> hand_over(const std::string& socket_path, const oom_capture& capture, std::chrono::milliseconds deadline,
                       std::chrono::milliseconds hold) {
    const auto end = clock::now() + deadline;
    sockaddr_un addr{};
    if (!unix_address(socket_path, addr)) return fail(error_code::bad_value, "bad socket path " + socket_path);
    unique_fd s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!s) return fail(error_code::io, std::string("socket: ") + std::strerror(errno));
    if (::connect(s.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        if (errno != EAGAIN && errno != EINPROGRESS)
            return fail(error_code::io, socket_path + ": " + std::strerror(errno));
        if (!wait_for(s.get(), POLLOUT, end)) return fail(error_code::io, socket_path + ": no answer in time");
        int error = 0;
        socklen_t len = sizeof error;
        if (::getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &error, &len) != 0 || error != 0)
            return fail(error_code::io, socket_path + ": " + std::strerror(error != 0 ? error : errno));
    }
    auto frame = wire::encode_request({1, "dump", capture.args});
    if (!frame) return fail(error_code::bad_value, frame.error().message);
    for (std::size_t at = 0; at < frame->size();) {
        // The dump's descriptor goes with the frame's first byte.
        const ssize_t n = send_with_fd(s.get(), frame->data() + at, frame->size() - at,
                                       at == 0 && capture.dump ? capture.dump->get() : -1);
        if (n > 0) {
            at += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EAGAIN && wait_for(s.get(), POLLOUT, end)) continue;
        return fail(error_code::io, socket_path + ": cannot send: " + std::strerror(errno));
    }
    // The daemon's acknowledgement (the job it queued), or its refusal. A snapshot is waited for
    // (up to hold): the JVM must stay where it is until its core is taken.
    const bool snapshot = capture.args.value("snapshot", false);
    const auto held_until = clock::now() + hold;
    bool acknowledged = false;
    wire::frame_parser parser;
    char buffer[4096];
    while (wait_for(s.get(), POLLIN, snapshot ? held_until : end)) {
        ssize_t n = ::read(s.get(), buffer, sizeof buffer);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n <= 0) return fail(error_code::io, socket_path + ": the daemon closed the connection");
        if (!parser.feed(std::string_view(buffer, static_cast<std::size_t>(n))))
            return fail(error_code::bad_value, socket_path + ": an oversized reply");
        while (auto payload = parser.next()) {
            auto reply = wire::decode_reply(*payload);
            if (!reply) return fail(error_code::bad_value, reply.error().message);
            // Busy (too many clients or jobs): not taken now, so the caller spools it.
            if (reply->kind == wire::reply_kind::error && reply->error.kind == wire::error_kind::busy)
                return fail(error_code::io, socket_path + ": " + reply->error.message);
            if (reply->kind == wire::reply_kind::error) return fail(error_code::unsupported, reply->error.message);
            acknowledged = true;
            if (!snapshot || reply->kind == wire::reply_kind::result) return {};
            // Progress of the dump job: the JVM may go once it is past its snapshot.
            if (reply->progress.phase != "prepare" && reply->progress.phase != "snapshot") return {};
        }
    }
    // Sent but not acknowledged in time: a daemon that hangs may never read it, so it is spooled
    // too (the daemon takes the request once, by its id). A snapshot acknowledged and still under
    // way when the hold ends lets the JVM go.
    if (acknowledged) return {};
    return fail(error_code::io, socket_path + ": no acknowledgement in time");
}

std::string hook_socket_path() {
    const char* env = std::getenv("HEAPD_SOCKET");
    return env != nullptr && *env != '\0' ? env : wire::standard_socket_path;
}

}  // namespace heapd::daemon
