#include "base/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "base/unix_socket.h"

extern char** environ;

namespace heapd {
namespace {

using clock = child_limits::clock;

result<std::pair<unique_fd, unique_fd>> socket_pair() {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
        return fail(error_code::io, std::string("socketpair: ") + std::strerror(errno));
    return std::pair{unique_fd(pair[0]), unique_fd(pair[1])};
}

// Milliseconds from now to t, at least 0 and at most a day (poll takes an int).
long long millis_until(clock::time_point t) {
    if (t == clock::time_point::max()) return 86'400'000;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(t - clock::now()).count();
    return std::clamp<long long>(left, 0, 86'400'000);
}

}  // namespace

void close_all_but(std::span<int> keep) {
    for (std::size_t i = 1; i < keep.size(); ++i)  // insertion sort: no allocation after fork
        for (std::size_t j = i; j > 0 && keep[j - 1] > keep[j]; --j) std::swap(keep[j - 1], keep[j]);
    unsigned low = 3;
    for (int fd : keep) {
        if (fd < static_cast<int>(low)) continue;
        if (static_cast<unsigned>(fd) > low) ::close_range(low, static_cast<unsigned>(fd) - 1, 0);
        low = static_cast<unsigned>(fd) + 1;
    }
    ::close_range(low, ~0u, 0);
}

std::string child_exit::text() const {
    if (signal == 0) return "exited with status " + std::to_string(code);
    const char* name = ::strsignal(signal);
    return "was killed by signal " + std::to_string(signal) + (name != nullptr ? std::string(" (") + name + ")" : "");
}

result<child_process> child_process::fork(body b, const void* context) {
    auto pair = socket_pair();
    if (!pair) return std::unexpected(pair.error());
    const pid_t pid = ::fork();
    if (pid < 0) return fail(error_code::io, std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        ::close(pair->first.release());
        ::_exit(b(pair->second.get(), context));
    }
    return child_process(pid, std::move(pair->first));
}

result<child_process> child_process::spawn(const spawn_spec& spec) {
    auto pair = socket_pair();
    if (!pair) return std::unexpected(pair.error());
    // Out of the way of 3, 4, ... first: a descriptor already at its place would keep close-on-exec.
    std::vector<unique_fd> moved;
    const int above = 10 + static_cast<int>(spec.fds.size());
    for (int fd : spec.fds) {
        moved.emplace_back(::fcntl(fd, F_DUPFD_CLOEXEC, above));
        if (!moved.back()) return fail(error_code::io, std::string("dup: ") + std::strerror(errno));
    }
    std::vector<std::string> args = spec.argv, vars = spec.env.value_or(std::vector<std::string>{});
    std::vector<char*> arg_ptrs, env_ptrs;
    for (std::string& a : args) arg_ptrs.push_back(a.data());
    arg_ptrs.push_back(nullptr);
    for (std::string& e : vars) env_ptrs.push_back(e.data());
    env_ptrs.push_back(nullptr);
    char* const* environment = spec.env ? env_ptrs.data() : environ;

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY | O_NOCTTY, 0);
    posix_spawn_file_actions_adddup2(&actions, pair->second.get(), STDOUT_FILENO);
    for (std::size_t i = 0; i < moved.size(); ++i)
        posix_spawn_file_actions_adddup2(&actions, moved[i].get(), 3 + static_cast<int>(i));
    posix_spawn_file_actions_addclosefrom_np(&actions, 3 + static_cast<int>(moved.size()));
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    if (spec.own_group) {
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
        posix_spawnattr_setpgroup(&attr, 0);
    }
    pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, spec.path.c_str(), &actions, &attr, arg_ptrs.data(), environment);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) return fail(error_code::io, "cannot start " + spec.path + ": " + std::strerror(rc));
    return child_process(pid, std::move(pair->first));
}

child_process::child_process(child_process&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      channel_(std::move(other.channel_)),
      reaped_(std::exchange(other.reaped_, true)),
      exit_(other.exit_) {}

child_process& child_process::operator=(child_process&& other) noexcept {
    if (this != &other) {
        if (!reaped_ && pid_ > 0) {
            kill();
            wait();
        }
        pid_ = std::exchange(other.pid_, -1);
        channel_ = std::move(other.channel_);
        reaped_ = std::exchange(other.reaped_, true);
        exit_ = other.exit_;
    }
    return *this;
}

child_process::~child_process() {
    if (!reaped_ && pid_ > 0) {
        kill();
        wait();
    }
}

child_read_end child_process::read(const child_limits& limits, const data_handler& on_data) {
    auto end = [&](child_read_end why) {
        if (why != child_read_end::closed) kill();
        channel_.reset();
        return why;
    };
    if (!channel_) return end(child_read_end::failed);
    auto last_heard = clock::now();
    std::vector<unique_fd> fds;
    std::string buffer(65536, '\0');
    for (;;) {
        if (limits.cancelled && limits.cancelled()) return end(child_read_end::cancelled);
        const auto now = clock::now();
        if (now >= limits.deadline) return end(child_read_end::deadline);
        const bool watch_silence = limits.silence.count() > 0;
        if (watch_silence && now >= last_heard + limits.silence) return end(child_read_end::silence);
        long long wait_ms = std::min<long long>(limits.tick.count(), millis_until(limits.deadline));
        if (watch_silence) wait_ms = std::min(wait_ms, millis_until(last_heard + limits.silence));
        pollfd p{channel_.get(), POLLIN, 0};
        const int ready = ::poll(&p, 1, static_cast<int>(std::max<long long>(wait_ms, 1)));
        if (ready < 0 && errno != EINTR) return end(child_read_end::failed);
        if (ready <= 0) continue;
        const ssize_t n = receive_with_fds(channel_.get(), buffer.data(), buffer.size(), 0, fds, limits.max_fds);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return end(child_read_end::failed);
        if (n == 0) return end(child_read_end::closed);
        last_heard = clock::now();
        if (!on_data(std::string_view(buffer.data(), static_cast<std::size_t>(n)), fds))
            return end(child_read_end::stopped);
        fds.clear();
    }
}

child_read_end child_process::read_all(const child_limits& limits, std::string& out, std::size_t max_bytes) {
    return read(limits, [&](std::string_view bytes, std::vector<unique_fd>&) {
        out.append(bytes.substr(0, max_bytes - std::min(max_bytes, out.size())));
        return true;
    });
}

void child_process::kill() {
    if (reaped_ || pid_ <= 0) return;
    // A child that made a process group of its own (a helper program and whatever it started)
    // goes with all of it; for any other there is no such group.
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
}

child_exit child_process::wait() {
    if (reaped_ || pid_ <= 0) return exit_;
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {}
    reaped_ = true;
    exit_ = WIFSIGNALED(status) ? child_exit{-1, WTERMSIG(status)} : child_exit{WEXITSTATUS(status), 0};
    return exit_;
}

}  // namespace heapd
