// Native stacks read with ptrace and libunwind from real processes: a JVM stopped with SIGSTOP (left
// stopped), a JVM spinning in JNI code (runs on), threads that exit at each step of the capture, a
// process killed meanwhile, another tracer, and a tracer killed at its time limit.
#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "daemon/stacks/native_stacks.h"
#include "support/jvm_process.h"
#include "support/process_state.h"

namespace heapd::test {
namespace {

using daemon::capture_native_stacks;
using daemon::capture_stage;
using daemon::native_stack_options;
using daemon::native_thread;

const native_thread* find_thread(const daemon::native_stacks& s, const std::string& name) {
    for (const auto& t : s.threads)
        if (t.name == name) return &t;
    return nullptr;
}

bool has_symbol(const native_thread& t, const std::string& symbol) {
    for (const auto& f : t.frames)
        if (f.symbol == symbol || f.symbol.starts_with(symbol + "(")) return true;
    return false;
}

int usr1_report_fd = -1;  // in a thread_target: where its SIGUSR1 handler reports

void report_usr1(int) { (void)!::write(usr1_report_fd, "u", 1); }

// A process of the test's own: a main thread waiting for the test, and a "victim" thread that
// exits when told (a byte on a pipe). Each SIGUSR1 it handles writes a byte to usr1_fd().
// Killed on destruction if still there.
class thread_target {
public:
    thread_target() {
        int tid_pipe[2];
        if (::pipe(tid_pipe) != 0 || ::pipe(victim_) != 0 || ::pipe(stay_) != 0 || ::pipe(usr1_) != 0) return;
        pid_ = ::fork();
        if (pid_ == 0) {
            ::close(victim_[1]);
            ::close(stay_[1]);
            usr1_report_fd = usr1_[1];
            struct sigaction sa {};
            sa.sa_handler = report_usr1;
            sa.sa_flags = SA_RESTART;
            ::sigaction(SIGUSR1, &sa, nullptr);
            std::thread victim([&] {
                pid_t tid = static_cast<pid_t>(::syscall(SYS_gettid));
                (void)!::write(tid_pipe[1], &tid, sizeof tid);
                char c;
                (void)!::read(victim_[0], &c, 1);
            });
            victim.detach();
            char c;
            while (::read(stay_[0], &c, 1) > 0) {}
            ::_exit(0);
        }
        ::close(victim_[0]);
        ::close(stay_[0]);
        ::close(usr1_[1]);
        ::close(tid_pipe[1]);
        if (::read(tid_pipe[0], &victim_tid_, sizeof victim_tid_) != sizeof victim_tid_) victim_tid_ = -1;
        ::close(tid_pipe[0]);
    }
    ~thread_target() {
        if (pid_ <= 0 || reaped_) return;
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
    }
    pid_t pid() const { return pid_; }
    pid_t victim() const { return victim_tid_; }
    int usr1_fd() const { return usr1_[0]; }
    // Makes the victim thread exit and waits until it is gone (or a zombie, when traced).
    void end_victim() const {
        (void)!::write(victim_[1], "x", 1);
        for (int i = 0; i < 1000; ++i) {
            char s = task_state(pid_, victim_tid_);
            if (s == '\0' || s == 'Z' || s == 'X') return;
            ::usleep(10000);
        }
    }
    // Tells the main thread to exit and returns the process's exit status (0: it ran normally).
    int finish() {
        ::close(stay_[1]);
        int status = 0;
        ::waitpid(pid_, &status, 0);
        reaped_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    // Reaps a target killed by the test; returns the signal that ended it.
    int reap() {
        int status = 0;
        ::waitpid(pid_, &status, 0);
        reaped_ = true;
        return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    }

private:
    pid_t pid_ = -1, victim_tid_ = -1;
    int victim_[2] = {-1, -1}, stay_[2] = {-1, -1}, usr1_[2] = {-1, -1};
    bool reaped_ = false;
};

TEST(native_stacks, stopped_jvm_shows_every_thread_and_stays_stopped) {
    demo_jvm jvm({"-Xmx64m"});
    ASSERT_TRUE(jvm.ready());
    stopped_process stop(jvm.pid());
    ASSERT_TRUE(stop.stopped());
    auto tids = task_ids(jvm.pid());
    auto s = capture_native_stacks(jvm.pid(), {});
    ASSERT_TRUE(s) << s.error().message;
    EXPECT_TRUE(s->was_stopped);
    EXPECT_EQ(s->process_name, "java");
    ASSERT_EQ(s->threads.size(), tids.size());
    bool libjvm = false, libc = false;
    for (std::size_t i = 0; i < tids.size(); ++i) {
        const native_thread& t = s->threads[i];
        EXPECT_EQ(t.tid, tids[i]);
        EXPECT_EQ(t.name, task_name(jvm.pid(), t.tid));
        EXPECT_EQ(t.state, 'T') << t.name;
        bool named = false;
        for (const auto& f : t.frames) {
            named = named || !f.symbol.empty();
            libjvm = libjvm || (!f.symbol.empty() && f.module.ends_with("/libjvm.so"));
            libc = libc || (!f.symbol.empty() && f.module.ends_with("/libc.so.6"));
        }
        EXPECT_TRUE(named) << "thread " << t.name << " has no named frame";
    }
    EXPECT_TRUE(libjvm);
    EXPECT_TRUE(libc);
    // The Java threads are inside the VM: thread_native_entry starts every thread the JVM makes.
    const native_thread* vm_thread = find_thread(*s, "VM Thread");
    ASSERT_NE(vm_thread, nullptr);
    EXPECT_TRUE(has_symbol(*vm_thread, "thread_native_entry"));
    EXPECT_TRUE(untraced(jvm.pid()));
    EXPECT_TRUE(wait_for_states(jvm.pid(), 'T')) << "the JVM no longer stopped";
    stop.resume();
    EXPECT_TRUE(wait_for_states(jvm.pid(), 'T', false));
    auto dump = jvm.jcmd({"Thread.print"});
    EXPECT_EQ(dump.exit_code, 0) << dump.out << dump.err;
    EXPECT_NE(dump.out.find("demo-worker"), std::string::npos);
}

TEST(native_stacks, jvm_spinning_in_native_code_shows_the_c_function_and_runs_on) {
    scratch_dir dir;
    std::string error;
    std::string lib = build_native_spin_library(dir.path(), error);
    ASSERT_FALSE(lib.empty()) << error;
    demo_jvm jvm(java_main{"NativeSpin"}, {"-Xmx64m"}, {lib});
    ASSERT_TRUE(jvm.ready());
    // A perf map names the JIT and interpreter code that has no ELF symbols; remove it afterwards.
    std::string perf_map = "/tmp/perf-" + std::to_string(jvm.pid()) + ".map";
    struct remove_file {
        std::string path;
        ~remove_file() { std::filesystem::remove(path); }
    } cleanup{perf_map};
    ASSERT_EQ(jvm.jcmd({"Compiler.perfmap"}).exit_code, 0);
    auto s = capture_native_stacks(jvm.pid(), {});
    ASSERT_TRUE(s) << s.error().message;
    EXPECT_FALSE(s->was_stopped);
    const native_thread* spinner = find_thread(*s, "native-spinner");
    ASSERT_NE(spinner, nullptr);
    EXPECT_EQ(spinner->state, 'R');
    ASSERT_FALSE(spinner->frames.empty());
    EXPECT_EQ(spinner->frames[0].symbol, "heapd_spin_forever");
    EXPECT_TRUE(spinner->frames[0].module.ends_with("/libnative_spin.so"));
    EXPECT_TRUE(has_symbol(*spinner, "Java_NativeSpin_spin"));
    bool perf = false;
    for (const auto& f : spinner->frames) perf = perf || f.symbol_source == "perf-map";
    EXPECT_TRUE(perf) << "no frame of the spinner was named from the perf map";
    EXPECT_TRUE(untraced(jvm.pid()));
    auto dump = jvm.jcmd({"Thread.print"});
    EXPECT_EQ(dump.exit_code, 0) << dump.out << dump.err;
    EXPECT_NE(dump.out.find("\"native-spinner\""), std::string::npos);
    // Still spinning: the JVM runs on.
    EXPECT_TRUE(wait_for_states(jvm.pid(), 'T', false));
    auto again = capture_native_stacks(jvm.pid(), {});
    ASSERT_TRUE(again);
    ASSERT_NE(find_thread(*again, "native-spinner"), nullptr);
    EXPECT_EQ(find_thread(*again, "native-spinner")->state, 'R');
}

// The perf map lies in the JVM's /tmp, which its user controls: a symbolic link there is not
// followed (heapd runs as root), so a map reached only through one names nothing.
TEST(native_stacks, a_perf_map_that_is_a_symbolic_link_is_not_followed) {
    scratch_dir dir;
    std::string error;
    std::string lib = build_native_spin_library(dir.path(), error);
    ASSERT_FALSE(lib.empty()) << error;
    demo_jvm jvm(java_main{"NativeSpin"}, {"-Xmx64m"}, {lib});
    ASSERT_TRUE(jvm.ready());
    std::string perf_map = "/tmp/perf-" + std::to_string(jvm.pid()) + ".map";
    struct remove_file {
        std::string path;
        ~remove_file() { std::filesystem::remove(path); }
    } cleanup{perf_map};
    ASSERT_EQ(jvm.jcmd({"Compiler.perfmap"}).exit_code, 0);
    // The real map moves elsewhere; its name becomes a link to it.
    const std::string moved = dir.file("elsewhere.map");
    std::filesystem::copy_file(perf_map, moved);
    std::filesystem::remove(perf_map);
    std::filesystem::create_symlink(moved, perf_map);
    auto s = capture_native_stacks(jvm.pid(), {});
    ASSERT_TRUE(s) << s.error().message;
    const native_thread* spinner = find_thread(*s, "native-spinner");
    ASSERT_NE(spinner, nullptr);
    ASSERT_FALSE(spinner->frames.empty());
    EXPECT_EQ(spinner->frames[0].symbol, "heapd_spin_forever");
    for (const auto& f : spinner->frames) EXPECT_NE(f.symbol_source, "perf-map") << f.symbol;
    EXPECT_TRUE(untraced(jvm.pid()));
}

// A thread that exits at a given stage is left out and counted; the rest are read and released.
void check_thread_exiting_at(capture_stage stage) {
    thread_target target;
    ASSERT_GT(target.victim(), 0);
    native_stack_options options;
    options.stage_hook = [&target, stage](capture_stage at, pid_t tid) {
        if (at == stage && tid == target.victim()) target.end_victim();
    };
    auto s = capture_native_stacks(target.pid(), options);
    ASSERT_TRUE(s) << s.error().message;
    EXPECT_GE(s->exited_threads, 1u);
    for (const auto& t : s->threads) EXPECT_NE(t.tid, target.victim());
    ASSERT_EQ(s->threads.size(), 1u);
    EXPECT_EQ(s->threads[0].tid, target.pid());
    EXPECT_FALSE(s->threads[0].frames.empty());
    EXPECT_TRUE(untraced(target.pid()));
    EXPECT_EQ(target.finish(), 0);
}

TEST(native_stacks, thread_exiting_before_it_is_seized) { check_thread_exiting_at(capture_stage::listed); }

TEST(native_stacks, thread_exiting_after_it_is_seized) { check_thread_exiting_at(capture_stage::seized); }

// A signal that arrives while a thread is seized stops it on its way in (a signal-delivery-stop);
// the thread gets it on release, as it would have without heapd.
TEST(native_stacks, signal_arriving_meanwhile_is_delivered_after) {
    thread_target target;
    ASSERT_GT(target.victim(), 0);
    native_stack_options options;
    options.stage_hook = [&target](capture_stage at, pid_t tid) {
        if (at != capture_stage::seized || tid != target.victim()) return;
        ::syscall(SYS_tgkill, target.pid(), tid, SIGUSR1);
        for (int i = 0; i < 1000 && task_state(target.pid(), tid) != 't'; ++i) ::usleep(10000);
    };
    auto s = capture_native_stacks(target.pid(), options);
    ASSERT_TRUE(s) << s.error().message;
    ASSERT_EQ(s->threads.size(), 2u);
    EXPECT_EQ(s->threads[1].tid, target.victim());
    EXPECT_EQ(s->threads[1].pending_signal, SIGUSR1);
    EXPECT_FALSE(s->threads[1].frames.empty());
    pollfd p{target.usr1_fd(), POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 10000), 1) << "SIGUSR1 was lost";
    char c = 0;
    EXPECT_EQ(::read(target.usr1_fd(), &c, 1), 1);
    EXPECT_TRUE(untraced(target.pid()));
    EXPECT_EQ(target.finish(), 0);
}

TEST(native_stacks, jvm_whose_threads_come_and_go) {
    demo_jvm jvm(java_main{"ThreadChurn"}, {"-Xmx64m"}, {});
    ASSERT_TRUE(jvm.ready());
    unsigned exited = 0;
    for (int i = 0; i < 10; ++i) {
        auto s = capture_native_stacks(jvm.pid(), {});
        ASSERT_TRUE(s) << s.error().message;
        exited += s->exited_threads;
        ASSERT_NE(find_thread(*s, "churner"), nullptr);
        for (const auto& t : s->threads) EXPECT_TRUE(!t.frames.empty() || !t.error.empty()) << t.name;
        EXPECT_TRUE(untraced(jvm.pid()));
    }
    RecordProperty("threads_exited_during_captures", static_cast<int>(exited));
    auto dump = jvm.jcmd({"Thread.print"});
    EXPECT_EQ(dump.exit_code, 0) << dump.out << dump.err;
    EXPECT_NE(dump.out.find("\"churner\""), std::string::npos);
}

TEST(native_stacks, process_killed_while_stopped) {
    thread_target target;
    ASSERT_GT(target.victim(), 0);
    native_stack_options options;
    options.stage_hook = [&target](capture_stage at, pid_t) {
        if (at == capture_stage::stopped) ::kill(target.pid(), SIGKILL);
    };
    auto s = capture_native_stacks(target.pid(), options);
    if (s) {
        for (const auto& t : s->threads) EXPECT_FALSE(t.error.empty()) << t.tid;
    } else {
        EXPECT_EQ(s.error().code, error_code::no_such_process) << s.error().message;
    }
    EXPECT_EQ(target.reap(), SIGKILL);
}

TEST(native_stacks, process_held_by_another_tracer) {
    thread_target target;
    int seized[2];
    ASSERT_EQ(::pipe(seized), 0);
    pid_t tracer = ::fork();
    if (tracer == 0) {
        char ok = ::ptrace(PTRACE_SEIZE, target.pid(), nullptr, nullptr) == 0 ? 'y' : 'n';
        (void)!::write(seized[1], &ok, 1);
        for (;;) ::pause();
    }
    char ok = 'n';
    ASSERT_EQ(::read(seized[0], &ok, 1), 1);
    ::close(seized[0]);
    ::close(seized[1]);
    auto s = capture_native_stacks(target.pid(), {});
    ::kill(tracer, SIGKILL);
    ::waitpid(tracer, nullptr, 0);
    ASSERT_EQ(ok, 'y');
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, error_code::already_traced);
    EXPECT_NE(s.error().message.find(std::to_string(tracer)), std::string::npos) << s.error().message;
    EXPECT_TRUE(untraced(target.pid()));
    EXPECT_EQ(target.finish(), 0);
}

// A tracer that overruns its time limit is killed; the kernel releases the process, which stays
// as it was: stopped if it was stopped, else running.
void check_tracer_killed(bool stop_first) {
    thread_target target;
    std::optional<stopped_process> stop;
    if (stop_first) {
        stop.emplace(target.pid());
        ASSERT_TRUE(stop->stopped());
    }
    native_stack_options options;
    options.timeout = std::chrono::milliseconds(100);
    options.stage_hook = [](capture_stage at, pid_t) {
        if (at == capture_stage::stopped)
            for (;;) ::pause();
    };
    auto s = capture_native_stacks(target.pid(), options);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, error_code::timed_out) << s.error().message;
    EXPECT_TRUE(untraced(target.pid()));
    if (stop_first) {
        EXPECT_TRUE(wait_for_states(target.pid(), 'T'));
        stop->resume();
    }
    EXPECT_TRUE(wait_for_states(target.pid(), 'T', false));
    EXPECT_EQ(target.finish(), 0);
}

TEST(native_stacks, tracer_killed_at_its_time_limit_leaves_a_running_process_running) { check_tracer_killed(false); }

TEST(native_stacks, tracer_killed_at_its_time_limit_leaves_a_stopped_process_stopped) { check_tracer_killed(true); }

// A thread waiting for a vfork child cannot stop (it sleeps uninterruptibly until the child
// leaves): the capture ends at its time limit with the other threads read, and the kernel releases
// the waiting thread when the tracer exits.
TEST(native_stacks, thread_that_cannot_stop_in_time) {
    int hold[2], started[2];
    ASSERT_EQ(::pipe(hold), 0);
    ASSERT_EQ(::pipe(started), 0);
    pid_t target = ::fork();
    if (target == 0) {
        ::close(hold[1]);
        pid_t waiter_tid = 0;
        std::thread waiter([&] {
            waiter_tid = static_cast<pid_t>(::syscall(SYS_gettid));
            (void)!::write(started[1], &waiter_tid, sizeof waiter_tid);
            if (::vfork() == 0) {  // the child shares our memory: only read(2) and _exit(2)
                char c;
                (void)!::read(hold[0], &c, 1);
                ::_exit(0);
            }
        });
        waiter.join();
        ::_exit(0);
    }
    ::close(hold[0]);
    pid_t waiter = 0;
    ASSERT_EQ(::read(started[0], &waiter, sizeof waiter), static_cast<ssize_t>(sizeof waiter));
    for (int i = 0; i < 1000 && task_state(target, waiter) != 'D'; ++i) ::usleep(10000);
    ASSERT_EQ(task_state(target, waiter), 'D');
    native_stack_options options;
    options.timeout = std::chrono::milliseconds(500);
    auto s = capture_native_stacks(target, options);
    EXPECT_TRUE(untraced(target));
    ::close(hold[1]);  // the vfork child exits, the waiter returns, the target ends normally
    int status = -1;
    ::waitpid(target, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    ASSERT_TRUE(s) << s.error().message;
    ASSERT_EQ(s->threads.size(), 2u);
    EXPECT_EQ(s->threads[0].tid, target);
    EXPECT_FALSE(s->threads[0].frames.empty());
    EXPECT_EQ(s->threads[1].tid, waiter);
    EXPECT_EQ(s->threads[1].error, "did not stop within the time limit");
}

TEST(native_stacks, no_such_process) {
    pid_t gone = ::fork();
    if (gone == 0) ::_exit(0);
    ::waitpid(gone, nullptr, 0);
    auto s = capture_native_stacks(gone, {});
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, error_code::no_such_process);
    EXPECT_FALSE(capture_native_stacks(-1, {}));
}

}  // namespace
}  // namespace heapd::test
