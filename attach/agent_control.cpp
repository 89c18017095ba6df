#include "attach/agent_control.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "attach/attach_client.h"
#include "attach/attach_session.h"
#include "attach/file_copy.h"
#include "attach/owner_files.h"
#include "attach/process_info.h"
#include "base/fd_io.h"
#include "base/safe_text.h"
#include "base/unique_fd.h"

namespace heapd::attach {
namespace {

// The JVM's reply, cut and made safe to show.
std::string reply_text(const std::string& output) {
    std::string text = output.substr(0, 400);
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return terminal_safe(text);
}

// Why a library (or its directory) may not be given to a JVM to load, or nothing.
std::optional<std::string> unsafe(const std::string& path, bool directory) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::string(std::strerror(errno));
    if (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
        return directory ? "is not a directory" : "is not a regular file";
    if (st.st_uid != 0 && st.st_uid != ::geteuid()) return "is owned by uid " + std::to_string(st.st_uid);
    // A sticky directory (/tmp) lets others add names but not replace ours: the next component of
    // the path is checked to be ours.
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && !(directory && (st.st_mode & S_ISVTX) != 0))
        return "is writable by others";
    return std::nullopt;
}

}  // namespace

std::optional<std::string> loaded_agent_library(pid_t pid) {
    auto maps = read_small_file(proc_path(pid, "maps"), 64u << 20);
    if (!maps) return std::nullopt;
    std::size_t line = 0;
    while (line < maps->size()) {
        std::size_t end = maps->find('\n', line);
        if (end == std::string::npos) end = maps->size();
        const std::string_view text(maps->data() + line, end - line);
        line = end + 1;
        const std::size_t slash = text.find('/');
        if (slash == std::string_view::npos) continue;
        const std::string_view path = text.substr(slash);
        if (path.ends_with("/libheapd_agent.so")) return std::string(path);
        // A copy placed in a container's /tmp: heapd-agent-<pid>-<16 hex digits>.so, as staging_name
        // makes them.
        constexpr std::string_view copy = "/tmp/heapd-agent-";
        if (path.starts_with(copy) && path.ends_with(".so") &&
            path.find_first_not_of("0123456789abcdef-.so", copy.size()) == std::string_view::npos)
            return std::string(path);
    }
    return std::nullopt;
}

result<std::string> find_agent_library(const std::string& chosen) {
    std::vector<std::string> candidates;
    if (!chosen.empty()) {
        if (chosen.front() != '/')
            return fail(error_code::not_found, "the agent library " + chosen + " is not an absolute path");
        candidates.push_back(chosen);
    } else {
        char exe[4096];
        ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n > 0) {
            std::string dir(exe, static_cast<std::size_t>(n));
            dir.resize(dir.rfind('/'));
            candidates.push_back(dir + "/libheapd_agent.so");
        }
        candidates.push_back(HEAPD_AGENT_INSTALL_PATH);
    }
    for (const std::string& given : candidates) {
        struct stat st {};
        if (::stat(given.c_str(), &st) != 0) continue;
        // The file the name leads to, and every directory above it: nobody but root (or us) may
        // change any of them, or the code a JVM loads could be swapped between the check and the load.
        char* real = ::realpath(given.c_str(), nullptr);
        if (real == nullptr)
            return fail(error_code::not_found, "the agent library " + given + ": " + std::strerror(errno));
        const std::string path(real);
        std::free(real);
        if (auto why = unsafe(path, false))
            return fail(error_code::permission_denied, "the agent library " + path + " " + *why + ": not loaded");
        for (std::size_t slash = path.rfind('/'); slash != std::string::npos && slash != 0;
             slash = path.rfind('/', slash - 1)) {
            const std::string dir = path.substr(0, slash);
            if (auto why = unsafe(dir, true))
                return fail(error_code::permission_denied,
                            "the directory " + dir + " of the agent library " + *why + ": not loaded");
        }
        return path;
    }
    std::string tried;
    for (const std::string& path : candidates) tried += (tried.empty() ? "" : ", ") + path;
    return fail(error_code::not_found, "heapd's agent library is not installed (looked for " + tried + ")");
}

result<std::string> agent_command(pid_t pid, const agent_target& agent, std::string_view command, int protocol,
                                  const attach_options& options) {
    auto target = read_process_info(pid);
    if (!target) return std::unexpected(target.error());
    const std::string who = "process " + std::to_string(pid);
    // A JVM that sees our filesystem loads the library where it is; one in a container loads the
    // copy it already has, else a copy placed in its /tmp for it (as its user, under a new name).
    std::string library = agent.library;
    unique_fd library_fd;
    std::optional<session_install> install;
    if (!same_filesystem_view(pid)) {
        if (auto loaded = loaded_agent_library(pid)) {
            library = *loaded;
        } else {
            library_fd.reset(::open(agent.library.c_str(), O_RDONLY | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW));
            if (!library_fd)
                return fail(error_code::io,
                            "cannot open the agent library " + agent.library + ": " + std::strerror(errno));
            install = session_install{library_fd.get(), staging_name("heapd-agent-", target->ns_pid, ".so")};
            library = "/tmp/" + install->name;
        }
    }
    session_file file{"", staging_name("heapd-agent-", target->ns_pid, ".json"), true};
    const std::string options_text =
        std::string(command) + ",protocol=" + std::to_string(protocol) + ",file=/tmp/" + file.name;
    attach_request request{"load", {library, "true", options_text}};
    auto reply = run_session(pid, request, options, &file, install ? &*install : nullptr);
    if (!reply) return std::unexpected(reply.error());
    // A JVM that ran Agent_OnAttach says "return code: N"; one that would not load the library says
    // why instead (JDK 21+ with -XX:-EnableDynamicAgentLoading answers with status 0 and the reason).
    const std::optional<int> code = agent_return_code(reply->output);
    if (reply->status != 0 || (code && *code != 0) || (!code && !file.collected))
        return fail(error_code::agent_refused,
                    who + " did not load heapd's agent " + library + ": " + reply_text(reply->output));
    if (!file.collected) {
        if (file.collect_errno == ENOENT)
            return fail(error_code::agent_refused, "heapd's agent in " + who + " wrote no answer in time");
        return fail(error_code::io,
                    "cannot open the answer of heapd's agent in " + who + ": " + std::strerror(file.collect_errno));
    }
    struct stat st {};
    if (::fstat(file.collected.get(), &st) != 0)
        return fail(error_code::io, "cannot stat the answer of heapd's agent in " + who + ": " + std::strerror(errno));
    if (auto why = handed_over_refusal(st, target->euid, agent.max_answer_bytes))
        return fail(error_code::io, "the answer of heapd's agent in " + who + " " + *why + ": not taken");
    auto text = read_to_end(file.collected.get(), agent.max_answer_bytes);
    if (!text) return fail(error_code::io, "cannot read the answer of heapd's agent in " + who);
    return std::move(*text);
}

std::string oom_answer_prefix(pid_t ns_pid, std::uint64_t start_time) {
    return "heapd-agent-oom-" + std::to_string(ns_pid) + "-" + std::to_string(start_time) + "-";
}

namespace {

// The names in dir that the agent could have given its table: prefix, 16 hex digits, ".json".
std::vector<std::string> oom_answer_names(int dir, const std::string& prefix) {
    std::vector<std::string> names;
    unique_fd listing(::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    DIR* d = listing ? ::fdopendir(listing.get()) : nullptr;
    if (d == nullptr) return names;
    listing.release();                                             // the stream owns it now
    constexpr std::size_t max_entries = 1u << 20, max_names = 16;  // a /tmp is no reason to read forever
    std::size_t seen = 0;
    while (dirent* e = ::readdir(d)) {
        if (++seen > max_entries || names.size() == max_names) break;
        const std::string_view name = e->d_name;
        if (!name.starts_with(prefix) || !name.ends_with(".json") || name.size() != prefix.size() + 16 + 5) continue;
        if (name.substr(prefix.size(), 16).find_first_not_of("0123456789abcdef") != std::string_view::npos) continue;
        names.emplace_back(name);
    }
    ::closedir(d);
    return names;
}

}  // namespace

std::optional<std::string> take_oom_answer(pid_t pid, pid_t ns_pid, std::uint64_t start_time, uid_t uid, gid_t gid,
                                           bool host_tmp, std::chrono::milliseconds wait, std::uint64_t max_bytes) {
    const std::string prefix = oom_answer_prefix(ns_pid, start_time);
    const auto deadline = std::chrono::steady_clock::now() + wait;
    for (;;) {
        auto now = read_process_info(pid);
        const bool alive = now && now->start_time == start_time;
        unique_fd dir(alive      ? open_jvm_tmp(pid)
                      : host_tmp ? ::open("/tmp", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                                 : -1);
        // The agent's name cannot be known in advance; of the names that fit, only a regular file of
        // the JVM's owner with no other name is taken. Anyone else's are left where they are.
        for (const std::string& name : dir ? oom_answer_names(dir.get(), prefix) : std::vector<std::string>{}) {
            unique_fd file(
                ::openat(dir.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
            struct stat st {};
            if (!file || ::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != uid ||
                st.st_nlink != 1 || static_cast<std::uint64_t>(st.st_size) > max_bytes)
                continue;
            auto text = read_to_end(file.get(), max_bytes);
            remove_as_owner(dir.get(), name, uid, gid);
            return text;
        }
        if (!alive || std::chrono::steady_clock::now() >= deadline) return std::nullopt;
        ::usleep(50 * 1000);
    }
}

}  // namespace heapd::attach
