#include "attach/heap_dump.h"

#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include "attach/attach_session.h"
#include "attach/process_info.h"

namespace heapd::attach {
namespace {

namespace fs = std::filesystem;

// A name nobody else uses in the JVM's /tmp.
std::string staging_name(pid_t ns_pid) {
    std::random_device random;
    char suffix[17];
    std::snprintf(suffix, sizeof suffix, "%08x%08x", random(), random());
    return "heapd-dump-" + std::to_string(ns_pid) + "-" + suffix + ".hprof";
}

// Copies from to a new file at to (mode 0600: heap dumps hold secrets); the copy is removed on failure.
attach_result<void> copy_new(const std::string& from, const std::string& to) {
    int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (in < 0) return attach_fail(attach_code::io, "cannot open " + from + ": " + std::strerror(errno));
    int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (out < 0) {
        int e = errno;
        ::close(in);
        return attach_fail(attach_code::io, "cannot create " + to + ": " + std::strerror(e));
    }
    int error = 0;
    for (;;) {
        ssize_t n = ::sendfile(out, in, nullptr, 1 << 30);
        if (n > 0) continue;
        if (n == 0) break;
        if (errno == EINTR) continue;
        if (errno != EINVAL && errno != ENOSYS) {
            error = errno;
            break;
        }
        // No sendfile between these files: plain reads and writes.
        char buffer[1 << 16];
        for (ssize_t got; (got = ::read(in, buffer, sizeof buffer)) != 0;) {
            if (got < 0 && errno == EINTR) continue;
            if (got < 0 || ::write(out, buffer, static_cast<std::size_t>(got)) != got) {
                error = errno != 0 ? errno : EIO;
                break;
            }
        }
        break;
    }
    if (::close(out) != 0 && error == 0) error = errno;
    ::close(in);
    if (error != 0) {
        ::unlink(to.c_str());
        return attach_fail(attach_code::io, "cannot copy the dump to " + to + ": " + std::strerror(error));
    }
    return {};
}

// Moves the JVM's file (seen through /proc/PID/root) to path: a rename when both are on one
// filesystem, else a copy; the original is removed either way.
attach_result<void> bring_out(const std::string& staged, const std::string& path) {
    if (::renameat2(AT_FDCWD, staged.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) == 0) {
        // The JVM made it; the caller asked for it and owns it now.
        if (::chown(path.c_str(), ::geteuid(), ::getegid()) != 0 && ::geteuid() == 0)
            return attach_fail(attach_code::io, "chown " + path + ": " + std::strerror(errno));
        return {};
    }
    if (errno != EXDEV) {
        int e = errno;
        ::unlink(staged.c_str());
        return attach_fail(attach_code::io, "cannot move the dump to " + path + ": " + std::strerror(e));
    }
    auto copied = copy_new(staged, path);
    ::unlink(staged.c_str());
    return copied;
}

} // namespace

attach_result<dump_reply> dump_heap(pid_t pid, const std::string& path, const dump_options& dump,
                                    const attach_options& options) {
    std::error_code ec;
    fs::path absolute = fs::absolute(path, ec);
    if (ec) return attach_fail(attach_code::io, path + ": " + ec.message());
    absolute = absolute.lexically_normal();
    if (fs::symlink_status(absolute, ec).type() != fs::file_type::not_found)
        return attach_fail(attach_code::io, absolute.string() + " exists (a heap dump never overwrites a file)");
    auto target = read_process_info(pid);
    if (!target) return std::unexpected(target.error());

    dump_reply out;
    out.path = absolute.string();
    // In place when the JVM sees our filesystem as we do and writes as we would; else in its /tmp.
    const bool in_place = same_filesystem_view(pid) && target->euid == ::geteuid();
    std::string jvm_path = out.path, staged_host_path;
    session_watch watch{absolute.parent_path().string(), absolute.filename().string()};
    if (!in_place) {
        std::string name = staging_name(target->ns_pid);
        jvm_path = out.staged_path = "/tmp/" + name;
        watch = session_watch{"/proc/" + std::to_string(pid) + "/root/tmp", name};
        staged_host_path = watch.dir + "/" + name;
    }
    attach_request request{"dumpheap",
                           {jvm_path, dump.live ? "-live" : "-all",
                            dump.gzip_level > 0 ? std::to_string(dump.gzip_level) : std::string()}};
    auto reply = run_session(pid, request, options, &watch);
    if (!reply) {
        if (!staged_host_path.empty()) ::unlink(staged_host_path.c_str());  // a partial dump
        return std::unexpected(reply.error());
    }
    out.reply = std::move(*reply);
    if (in_place) {
        out.written = out.reply.status == 0 && fs::is_regular_file(absolute, ec);
        return out;
    }
    struct stat st {};
    bool staged_exists = ::lstat(staged_host_path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
    if (out.reply.status != 0 || !staged_exists) {
        if (staged_exists) ::unlink(staged_host_path.c_str());
        return out;  // the JVM's output says why
    }
    if (auto moved = bring_out(staged_host_path, out.path); !moved) return std::unexpected(moved.error());
    out.written = true;
    return out;
}

} // namespace heapd::attach
