#include "daemon/runtime/crash_handler.h"

#include "daemon/runtime/log_destination.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace heapd::daemon {
namespace {

constexpr std::size_t stack_bytes = 64 * 1024;
constexpr int fatal_signals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
constexpr int max_frames = 64;

int extra_log_fd = -1;
// stderr is journald's stream: each line there starts with "<2>" so the journal keeps it at
// priority 2 (critical) rather than the stream's default, info (SyslogLevelPrefix=, systemd.exec(5)).
bool stderr_priority_prefix = false;
std::atomic<bool> handling{false};

// Appends to a fixed buffer without allocating: the handler may use nothing else.
struct line_buffer {
    char data[512];
    std::size_t size = 0;
    void add(const char* s) {
        while (*s != '\0' && size < sizeof data) data[size++] = *s++;
    }
    void add_hex(std::uint64_t v) {
        char digits[17];
        int n = 0;
        do {
            digits[n++] = "0123456789abcdef"[v & 0xf];
            v >>= 4;
        } while (v != 0);
        add("0x");
        while (n > 0 && size < sizeof data) data[size++] = digits[--n];
    }
    void add_dec(std::uint64_t v) {
        char digits[21];
        int n = 0;
        do {
            digits[n++] = static_cast<char>('0' + v % 10);
            v /= 10;
        } while (v != 0);
        while (n > 0 && size < sizeof data) data[size++] = digits[--n];
    }
    void emit() {
        if (size == sizeof data) data[size - 1] = '\n';
        if (stderr_priority_prefix) write_all(STDERR_FILENO, "<2>", 3);
        write_all(STDERR_FILENO, data, size);
        if (extra_log_fd >= 0) write_all(extra_log_fd, data, size);
        size = 0;
    }
    static void write_all(int fd, const char* bytes, std::size_t n) {
        std::size_t off = 0;
        while (off < n) {
            ssize_t w = ::write(fd, bytes + off, n - off);
            if (w <= 0) break;
            off += static_cast<std::size_t>(w);
        }
    }
};

const char* signal_name(int sig) {
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGABRT: return "SIGABRT";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    default: return "signal";
    }
}

void on_fatal_signal(int sig, siginfo_t* info, void*) {
    if (handling.exchange(true)) {
        // A second crash, in the handler or another thread: just die of it.
        ::signal(sig, SIG_DFL);
        ::raise(sig);
        return;
    }
    line_buffer line;
    line.add("heapd: fatal signal ");
    line.add(signal_name(sig));
    if (sig != SIGABRT) {
        line.add(" at address ");
        line.add_hex(reinterpret_cast<std::uintptr_t>(info->si_addr));
    }
    line.add(" in thread ");
    line.add_dec(static_cast<std::uint64_t>(::syscall(SYS_gettid)));
    line.add("; backtrace of the crashing thread:\n");
    line.emit();

    unw_context_t context;
    unw_cursor_t cursor;
    if (unw_getcontext(&context) == 0 && unw_init_local(&cursor, &context) == 0) {
        for (int frame = 0; frame < max_frames && unw_step(&cursor) > 0; ++frame) {
            unw_word_t ip = 0, offset = 0;
            unw_get_reg(&cursor, UNW_REG_IP, &ip);
            char name[256];
            line.add("heapd:   #");
            line.add_dec(static_cast<std::uint64_t>(frame));
            line.add(" ");
            line.add_hex(ip);
            line.add(" ");
            if (unw_get_proc_name(&cursor, name, sizeof name, &offset) == 0) {
                name[sizeof name - 1] = '\0';
                line.add(name);
                line.add("+");
                line.add_hex(offset);
            } else {
                line.add("??");
            }
            line.add("\n");
            line.emit();
        }
    }
    line.add("heapd: end of backtrace\n");
    line.emit();
    // Die of the same signal: blocked while this handler runs, it is delivered when it returns.
    ::signal(sig, SIG_DFL);
    ::raise(sig);
}

[[gnu::noinline]] void bad_write() {
    volatile std::uintptr_t address = 16;
    *reinterpret_cast<volatile int*>(address) = 1;
}

}  // namespace

alternate_stack::alternate_stack() {
    void* p = ::mmap(nullptr, stack_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    stack_t st{};
    st.ss_sp = p;
    st.ss_size = stack_bytes;
    if (::sigaltstack(&st, nullptr) != 0) {
        ::munmap(p, stack_bytes);
        return;
    }
    memory_ = p;
}

alternate_stack::~alternate_stack() {
    if (memory_ == nullptr) return;
    stack_t st{};
    st.ss_flags = SS_DISABLE;
    ::sigaltstack(&st, nullptr);
    ::munmap(memory_, stack_bytes);
}

void install_crash_handler(int extra_fd) {
    static alternate_stack main_stack;
    extra_log_fd = extra_fd;
    stderr_priority_prefix = stderr_is_journal();
    struct sigaction sa {};
    sa.sa_sigaction = on_fatal_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (int sig : fatal_signals) ::sigaction(sig, &sa, nullptr);
}

[[noreturn, gnu::noinline]] void crash_for_test(std::string_view how) {
    if (how == "abort") std::abort();
    if (how == "thread") {
        std::thread t([] {
            alternate_stack stack;
            bad_write();
        });
        t.join();
    }
    bad_write();
    std::abort();  // not reached
}

}  // namespace heapd::daemon
