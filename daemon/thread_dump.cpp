// The JVM's thread dump. Through the attach library (attach/attach_client.h) where it is built;
// until then through `jcmd PID Thread.print` run with the same time limit.
#include "thread_dump.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include "proc_files.h"

#if __has_include("attach/attach_client.h")
#include "attach/attach_client.h"

namespace heapd::cmd {

std::expected<std::string, attach::attach_error> java_thread_dump(pid_t pid, std::chrono::milliseconds timeout) {
    attach::attach_options options;
    options.timeout = timeout;
    auto reply = attach::attach_command(pid, attach::attach_request{"threaddump", {}}, options);
    if (!reply) return std::unexpected(reply.error());
    if (reply->status != 0)
        return attach::attach_fail(attach::attach_code::protocol, "the JVM answered threaddump with status " +
                                                                      std::to_string(reply->status) + ": " + reply->output);
    return std::move(reply->output);
}

} // namespace heapd::cmd

#else
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <vector>

namespace heapd::cmd {
namespace {

using attach::attach_code;
using attach::attach_fail;
using clock = std::chrono::steady_clock;

// Whether /proc/PID/status says the process catches SIGQUIT (a HotSpot JVM does, with attach on).
bool catches_sigquit(pid_t pid) {
    std::string caught = stacks::status_field(pid, "SigCgt");
    if (caught.empty()) return false;
    unsigned long long mask = std::strtoull(caught.c_str(), nullptr, 16);
    return (mask >> (SIGQUIT - 1)) & 1;
}

// The jcmd beside the target's own java launcher if this host has it there, else jcmd on PATH.
std::string jcmd_for(pid_t pid) {
    std::error_code ec;
    auto exe = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
    if (!ec) {
        auto jcmd = exe.parent_path() / "jcmd";
        if (::access(jcmd.c_str(), X_OK) == 0) return jcmd.string();
    }
    return "jcmd";
}

// The files a client creates to ask the JVM to start its attach listener.
std::vector<std::string> trigger_files(pid_t pid) {
    std::string name = ".attach_pid" + std::to_string(stacks::namespace_pid(pid));
    std::string proc = "/proc/" + std::to_string(pid);
    return {proc + "/cwd/" + name, proc + "/root/tmp/" + name};
}

// What jcmd printed when it failed, as an attach error.
attach::attach_error classify(const std::string& text, pid_t pid) {
    auto has = [&text](const char* s) { return text.find(s) != std::string::npos; };
    // The exception's line, without the Java stack trace under it.
    std::string line;
    for (std::size_t pos = 0; pos < text.size() && line.empty();) {
        std::size_t eol = std::min(text.find('\n', pos), text.size());
        if (eol > pos && text[pos] != '\t') line = text.substr(pos, eol - pos);
        pos = eol + 1;
    }
    std::string said = "jcmd " + std::to_string(pid) + " Thread.print failed: " + line;
    if (has("No such process")) return {attach_code::no_such_process, said};
    if (has("doesn't respond") || has("timed out") || has("Timeout")) return {attach_code::not_responding, said};
    if (has("Permission denied") || has("not secure") || has("Operation not permitted"))
        return {attach_code::permission_denied, said};
    if (has("AttachNotSupportedException")) return {attach_code::attach_disabled, said};
    return {attach_code::io, said};
}

} // namespace

std::expected<std::string, attach::attach_error> java_thread_dump(pid_t pid, std::chrono::milliseconds timeout) {
    const std::string who = "process " + std::to_string(pid);
    if (pid <= 0 || ::access(("/proc/" + std::to_string(pid)).c_str(), F_OK) != 0)
        return attach_fail(attach_code::no_such_process, "no " + who);
    if (!catches_sigquit(pid))
        return attach_fail(attach_code::not_a_jvm, who + " does not handle SIGQUIT: no running HotSpot JVM");
    if (auto maps = stacks::read_small_file("/proc/" + std::to_string(pid) + "/maps");
        maps && maps->find("/libjvm.so") == std::string::npos)
        return attach_fail(attach_code::not_a_jvm, who + " has no libjvm.so mapped: not a HotSpot JVM");
    std::vector<bool> existed;
    for (const auto& f : trigger_files(pid)) existed.push_back(::access(f.c_str(), F_OK) == 0);

    std::vector<std::string> args = {jcmd_for(pid), "-J-Dsun.tools.attach.attachTimeout=" + std::to_string(timeout.count()),
                                     std::to_string(pid), "Thread.print"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return attach_fail(attach_code::io, std::string("pipe: ") + std::strerror(errno));
    pid_t child = ::fork();
    if (child < 0) {
        int err = errno;
        ::close(out[0]);
        ::close(out[1]);
        return attach_fail(attach_code::io, std::string("fork: ") + std::strerror(err));
    }
    if (child == 0) {
        ::dup2(out[1], 1);
        ::dup2(out[1], 2);
        int devnull = ::open("/dev/null", O_RDONLY);
        if (devnull >= 0) ::dup2(devnull, 0);
        ::execvp(argv[0], argv.data());
        ::_exit(127);
    }
    ::close(out[1]);
    // jcmd is itself a JVM: allow it two seconds to start beyond the attach time limit.
    const clock::time_point deadline = clock::now() + timeout + std::chrono::seconds(2);
    std::string text;
    bool killed = false, eof = false;
    char buf[65536];
    while (!eof) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
        if (left <= 0) {
            killed = true;
            break;
        }
        pollfd p{out[0], POLLIN, 0};
        int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
        if (ready < 0 && errno != EINTR) break;
        if (ready <= 0) continue;
        ssize_t n = ::read(out[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        eof = n == 0;
        text.append(buf, static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
    }
    ::close(out[0]);
    if (!eof) {
        ::kill(child, SIGKILL);
        killed = true;
    }
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (killed) {
        // A killed jcmd leaves its trigger file behind: remove it unless it was there before.
        auto files = trigger_files(pid);
        for (std::size_t i = 0; i < files.size(); ++i)
            if (!existed[i]) ::unlink(files[i].c_str());
        return attach_fail(attach_code::not_responding,
                           who + " did not answer a thread dump request within " + std::to_string(timeout.count()) + " ms");
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && text.empty())
        return attach_fail(attach_code::io, "cannot run jcmd (is a JDK installed?)");
    // jcmd prints "PID:" before the dump; the dump itself starts after it.
    std::string header = std::to_string(pid) + ":\n";
    if (text.starts_with(header)) text.erase(0, header.size());
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !text.contains("Full thread dump"))
        return std::unexpected(classify(text, pid));
    return text;
}

} // namespace heapd::cmd
#endif
