#include "base/interruptible_sleep.h"

#include <signal.h>
#include <time.h>

#include <atomic>

namespace heapd {
namespace {

std::atomic<bool> interrupted{false};

void on_signal(int) { interrupted = true; }

}  // namespace

bool sleep_unless_interrupted(double seconds) {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    timespec until{};
    clock_gettime(CLOCK_MONOTONIC, &until);
    const auto ns = static_cast<long long>(seconds * 1e9);
    until.tv_sec += static_cast<time_t>(ns / 1000000000LL);
    until.tv_nsec += static_cast<long>(ns % 1000000000LL);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec += 1;
        until.tv_nsec -= 1000000000L;
    }
    while (!interrupted && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nullptr) != 0) {}
    return !interrupted;
}

}  // namespace heapd
