#include "attach/heap_dump.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "attach/attach_session.h"
#include "attach/file_copy.h"
#include "attach/process_info.h"

namespace heapd::attach {
namespace {

namespace fs = std::filesystem;

}  // namespace

bool remove_staged_dump(const staged_dump& staged) {
    const std::string& n = staged.name;
    if (!n.starts_with("heapd-dump-") || !n.ends_with(".hprof") || n.find('/') != std::string::npos) return false;
    auto now = read_process_info(staged.pid);
    unique_fd dir;
    if (now && now->start_time == staged.start_time)
        dir.reset(open_jvm_tmp(staged.pid));
    else if (staged.host_tmp)
        dir.reset(::open("/tmp", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    // The name is one heapd made up at random in a sticky directory: nobody else's file has it.
    return dir && ::unlinkat(dir.get(), n.c_str(), 0) == 0;
}

result<dump_reply> dump_heap(pid_t pid, const std::string& path, const dump_options& dump,
                             const attach_options& options) {
    std::error_code ec;
    fs::path absolute = fs::absolute(path, ec);
    if (ec) return fail(error_code::io, path + ": " + ec.message());
    absolute = absolute.lexically_normal();
    if (fs::symlink_status(absolute, ec).type() != fs::file_type::not_found)
        return fail(error_code::io, absolute.string() + " exists (a heap dump never overwrites a file)");
    auto target = read_process_info(pid);
    if (!target) return std::unexpected(target.error());

    dump_reply out;
    out.path = absolute.string();
    // In place when the JVM sees our filesystem as we do and writes as we would; else in its /tmp.
    const bool in_place = same_filesystem_view(pid) && target->euid == ::geteuid();
    std::string jvm_path = out.path;
    session_file file{absolute.parent_path().string(), absolute.filename().string()};
    if (!in_place) {
        file = session_file{"", staging_name("heapd-dump-", target->ns_pid, ".hprof"), true};
        jvm_path = out.staged_path = "/tmp/" + file.name;
        if (dump.on_staging) dump.on_staging(file.name);
    }
    attach_request request{"dumpheap",
                           {jvm_path, dump.live ? "-live" : "-all",
                            dump.gzip_level > 0 ? std::to_string(dump.gzip_level) : std::string()}};
    auto reply = run_session(pid, request, options, &file);
    if (!reply) return std::unexpected(reply.error());
    out.reply = std::move(*reply);
    if (in_place) {
        out.written = out.reply.status == 0 && fs::is_regular_file(absolute, ec);
        return out;
    }
    if (out.reply.status != 0) return out;  // the JVM's output says why (a partial file's name is gone)
    if (!file.collected) {
        if (file.collect_errno == ENOENT) return out;
        return fail(error_code::io,
                    "cannot open the dump " + out.staged_path + " the JVM wrote: " + std::strerror(file.collect_errno));
    }
    struct stat st {};
    if (::fstat(file.collected.get(), &st) != 0)
        return fail(error_code::io, "cannot stat the dump " + out.staged_path + ": " + std::strerror(errno));
    if (auto why = handed_over_refusal(st, target->euid, dump.max_bytes))
        return fail(error_code::io,
                    "the dump " + out.staged_path + " of process " + std::to_string(pid) + " " + *why + ": not taken");
    if (auto copied = copy_to_new_file(file.collected.get(), static_cast<std::uint64_t>(st.st_size), out.path); !copied)
        return std::unexpected(copied.error());
    out.written = true;
    return out;
}

}  // namespace heapd::attach
