#include "base/child_call.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "base/unix_socket.h"

namespace heapd {
namespace {

std::int64_t now_ms() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

int reap(pid_t child) {
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

void close_all_but(int keep_a, int keep_b) {
    if (keep_a > keep_b) std::swap(keep_a, keep_b);
    unsigned low = 3;
    for (int fd : {keep_a, keep_b}) {
        if (fd < static_cast<int>(low)) continue;
        if (static_cast<unsigned>(fd) > low) ::close_range(low, static_cast<unsigned>(fd) - 1, 0);
        low = static_cast<unsigned>(fd) + 1;
    }
    ::close_range(low, ~0u, 0);
}

result<child_answer> call_in_child(child_body body, const void* context, std::chrono::milliseconds limit,
                                   std::size_t max_bytes) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
        return fail(error_code::io, std::string("socketpair: ") + std::strerror(errno));
    const pid_t child = ::fork();
    if (child < 0) {
        const int e = errno;
        ::close(pair[0]);
        ::close(pair[1]);
        return fail(error_code::io, std::string("fork: ") + std::strerror(e));
    }
    if (child == 0) {
        ::close(pair[0]);
        ::_exit(body(pair[1], context));
    }
    ::close(pair[1]);
    unique_fd in(pair[0]);
    child_answer answer;
    std::vector<unique_fd> fds;
    const std::int64_t deadline = now_ms() + limit.count();
    char buffer[4096];
    for (;;) {
        const std::int64_t left = deadline - now_ms();
        if (left <= 0) {
            ::kill(child, SIGKILL);
            reap(child);
            return fail(error_code::timed_out, "a helper process did not finish within " +
                                                   std::to_string(limit.count()) + " ms and was killed");
        }
        pollfd p{in.get(), POLLIN, 0};
        const int ready = ::poll(&p, 1, static_cast<int>(left));
        if (ready < 0 && errno != EINTR) break;
        if (ready <= 0) continue;
        const ssize_t n = receive_with_fds(in.get(), buffer, sizeof buffer, 0, fds, 1);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;  // the child closed its end: it is done
        const std::size_t room = max_bytes - std::min(max_bytes, answer.bytes.size());
        answer.bytes.append(buffer, std::min(room, static_cast<std::size_t>(n)));
    }
    if (!fds.empty()) answer.fd = std::move(fds.front());
    answer.exit_code = reap(child);
    return answer;
}

}  // namespace heapd
