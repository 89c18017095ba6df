// `heapd stack` against real JVMs: the JVM's own thread dump when it answers, native stacks with
// --native (a stopped JVM stays stopped, a spinning one runs on) or when it does not answer, and
// clear errors for a missing process, a process we may not trace, and a process that is no JVM.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/isolated_jvm.h"
#include "support/jvm_process.h"
#include "support/process_state.h"

namespace heapd::test {
namespace {

command_result heapd_stack(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {heapd_binary(), "stack"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv);
}

// The pid of a process that has just exited.
pid_t dead_pid() {
    pid_t pid = ::fork();
    if (pid == 0) ::_exit(0);
    ::waitpid(pid, nullptr, 0);
    return pid;
}

// A `sleep` process (no JVM), killed on destruction.
struct sleeper {
    pid_t pid = ::fork();
    sleeper() {
        if (pid == 0) {
            ::execlp("sleep", "sleep", "600", static_cast<char*>(nullptr));
            ::_exit(127);
        }
        ::usleep(100000);
    }
    ~sleeper() {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }
};

TEST(stack_command, responsive_jvm_gives_its_java_thread_dump) {
    demo_jvm jvm({"-Xmx64m"});
    ASSERT_TRUE(jvm.ready());
    auto r = heapd_stack({std::to_string(jvm.pid())});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // The dump itself, from its timestamp line on (not jcmd's "PID:" line).
    EXPECT_FALSE(r.out.starts_with(std::to_string(jvm.pid()) + ":")) << r.out.substr(0, 80);
    EXPECT_TRUE(!r.out.empty() && std::isdigit(static_cast<unsigned char>(r.out[0]))) << r.out.substr(0, 80);
    EXPECT_NE(r.out.find("Full thread dump"), std::string::npos);
    EXPECT_NE(r.out.find("\"demo-worker-"), std::string::npos);
    EXPECT_NE(r.out.find("at Demo.idle(Demo.java"), std::string::npos);
    EXPECT_EQ(r.err, "");
    auto j = heapd_stack({std::to_string(jvm.pid()), "--json"});
    ASSERT_EQ(j.exit_code, 0) << j.err;
    auto json = nlohmann::json::parse(j.out);
    EXPECT_EQ(json.at("source"), "jvm");
    EXPECT_NE(json.at("thread_dump").get<std::string>().find("at Demo.idle"), std::string::npos);
}

TEST(stack_command, a_jvm_that_takes_no_attach_has_its_java_stacks_read_from_outside) {
    demo_jvm jvm({"-Xmx64m", "-XX:+DisableAttachMechanism"});
    ASSERT_TRUE(jvm.ready());
    auto r = heapd_stack({std::to_string(jvm.pid())});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out.starts_with("# The JVM takes no attach (")) << r.out.substr(0, 200);
    // The serviceability agent names Java frames and threads ("- Demo.idle() @bci=4, line=62").
    EXPECT_NE(r.out.find("\"demo-worker-"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" - Demo.idle("), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("java.lang.Thread.State: "), std::string::npos) << r.out;
    // The JVM goes on, not stopped.
    EXPECT_EQ(::kill(jvm.pid(), 0), 0);
    auto j = heapd_stack({std::to_string(jvm.pid()), "--json"});
    ASSERT_EQ(j.exit_code, 0) << j.err;
    auto json = nlohmann::json::parse(j.out);
    EXPECT_EQ(json.at("source"), "serviceability agent");
    EXPECT_NE(json.at("fallback_reason").get<std::string>().find("DisableAttachMechanism"), std::string::npos);
    EXPECT_NE(json.at("thread_dump").get<std::string>().find(" - Demo.idle("), std::string::npos);
}

// A JVM in a container, run as another user from a JDK only the container has: the serviceability
// agent of that JDK reads it, in the container's mount and pid namespaces (there the JVM is pid 1).
TEST(stack_command, a_container_jvm_that_takes_no_attach_is_read_by_the_jdk_in_the_container) {
    temp_user user;
    ASSERT_TRUE(user.ok());
    isolation how{&user, true};
    how.own_jdk = true;
    isolated_jvm jvm(java_main{"Demo"}, {"-Xmx64m", "-XX:+DisableAttachMechanism"}, {}, how);
    ASSERT_TRUE(jvm.ready());
    ASSERT_EQ(jvm.ns_pid(), 1);
    std::error_code ec;
    EXPECT_EQ(std::filesystem::read_symlink("/proc/" + std::to_string(jvm.pid()) + "/exe", ec), "/tmp/jdk/bin/java");
    EXPECT_FALSE(std::filesystem::exists("/tmp/jdk/bin/jhsdb"));  // not on the host
    auto r = heapd_stack({std::to_string(jvm.pid())});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out.starts_with("# The JVM takes no attach (")) << r.out.substr(0, 200);
    EXPECT_NE(r.out.find("\"demo-worker-"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" - Demo.idle("), std::string::npos) << r.out;
    EXPECT_EQ(::kill(jvm.pid(), 0), 0);
    EXPECT_TRUE(untraced(jvm.pid()));
}

TEST(stack_command, native_stacks_of_a_stopped_jvm_leave_it_stopped) {
    demo_jvm jvm({"-Xmx64m"});
    ASSERT_TRUE(jvm.ready());
    stopped_process stop(jvm.pid());
    ASSERT_TRUE(stop.stopped());
    auto tids = task_ids(jvm.pid());
    auto r = heapd_stack({std::to_string(jvm.pid()), "--native", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto json = nlohmann::json::parse(r.out);
    EXPECT_EQ(json.at("source"), "native");
    EXPECT_EQ(json.at("was_stopped"), true);
    ASSERT_EQ(json.at("threads").size(), tids.size());
    std::size_t libjvm = 0, libc = 0;
    for (std::size_t i = 0; i < tids.size(); ++i) {
        const auto& t = json.at("threads")[i];
        EXPECT_EQ(t.at("tid"), tids[i]);
        // comm is cut at 15 bytes, sometimes inside a UTF-8 sequence: JSON replaces what remains.
        EXPECT_EQ(t.at("name").dump(), nlohmann::json(task_name(jvm.pid(), tids[i]))
                                           .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        bool named = false;
        for (const auto& f : t.at("frames")) {
            if (!f.contains("symbol")) continue;
            named = true;
            libjvm += f.at("module").get<std::string>().ends_with("/libjvm.so");
            libc += f.at("module").get<std::string>().ends_with("/libc.so.6");
        }
        EXPECT_TRUE(named) << t.dump();
    }
    EXPECT_GT(libjvm, 0u);
    EXPECT_GT(libc, 0u);
    EXPECT_TRUE(untraced(jvm.pid()));
    EXPECT_TRUE(wait_for_states(jvm.pid(), 'T'));
    // The text form says so too, and names threads and functions.
    auto text = heapd_stack({std::to_string(jvm.pid()), "--native"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("is left stopped"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("\"VM Thread\" tid "), std::string::npos);
    EXPECT_NE(text.out.find("thread_native_entry(Thread*)+0x"), std::string::npos);
    EXPECT_TRUE(wait_for_states(jvm.pid(), 'T'));
    stop.resume();
    EXPECT_TRUE(wait_for_states(jvm.pid(), 'T', false));
    auto after = heapd_stack({std::to_string(jvm.pid())});
    EXPECT_EQ(after.exit_code, 0) << after.err;
    EXPECT_NE(after.out.find("Full thread dump"), std::string::npos);
}

TEST(stack_command, native_stacks_of_a_jvm_spinning_in_c_code) {
    scratch_dir dir;
    std::string error;
    std::string lib = build_native_spin_library(dir.path(), error);
    ASSERT_FALSE(lib.empty()) << error;
    demo_jvm jvm(java_main{"NativeSpin"}, {"-Xmx64m"}, {lib});
    ASSERT_TRUE(jvm.ready());
    auto r = heapd_stack({std::to_string(jvm.pid()), "--native"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto at = r.out.find("\"native-spinner\" tid ");
    ASSERT_NE(at, std::string::npos) << r.out;
    std::string spinner = r.out.substr(at, r.out.find("\n\n", at) - at);
    EXPECT_NE(spinner.find(", running\n  #0   "), std::string::npos) << spinner;
    EXPECT_NE(spinner.find("heapd_spin_forever+0x"), std::string::npos) << spinner;
    EXPECT_NE(spinner.find("Java_NativeSpin_spin+0x"), std::string::npos) << spinner;
    EXPECT_NE(spinner.find("(libnative_spin.so)"), std::string::npos) << spinner;
    EXPECT_TRUE(untraced(jvm.pid()));
    auto dump = jvm.jcmd({"Thread.print"});
    EXPECT_EQ(dump.exit_code, 0) << dump.out << dump.err;
    EXPECT_NE(dump.out.find("\"native-spinner\""), std::string::npos);
}

TEST(stack_command, stopped_jvm_falls_back_to_native_stacks) {
    demo_jvm jvm({"-Xmx64m"});
    ASSERT_TRUE(jvm.ready());
    stopped_process stop(jvm.pid());
    ASSERT_TRUE(stop.stopped());
    auto r = heapd_stack({std::to_string(jvm.pid()), "--timeout", "3"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("the JVM did not answer"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("reading native stacks instead"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.starts_with("# The JVM did not answer")) << r.out.substr(0, 200);
    EXPECT_NE(r.out.find("Native stacks of process " + std::to_string(jvm.pid())), std::string::npos);
    EXPECT_NE(r.out.find("\"VM Thread\" tid "), std::string::npos);
    // No attach trigger file is left behind, and the JVM is as it was.
    std::string trigger = ".attach_pid" + std::to_string(jvm.pid());
    EXPECT_FALSE(std::filesystem::exists("/proc/" + std::to_string(jvm.pid()) + "/cwd/" + trigger));
    EXPECT_FALSE(std::filesystem::exists("/tmp/" + trigger));
    EXPECT_TRUE(untraced(jvm.pid()));
    EXPECT_TRUE(wait_for_states(jvm.pid(), 'T'));
    stop.resume();
    EXPECT_EQ(jvm.jcmd({"VM.version"}).exit_code, 0);
}

// While -XX:OnOutOfMemoryError runs, the JVM sits at a safepoint and cannot answer: the native
// stacks show its VM thread waiting for the hook command.
TEST(stack_command, jvm_at_a_safepoint_in_its_oom_hook) {
    scratch_dir dir;
    std::string hold = dir.file("hold"), mark = dir.file("hook-running");
    std::ofstream(dir.file("hook.sh")) << "touch '" << mark << "'\nwhile [ -e '" << hold << "' ]; do sleep 0.1; done\n";
    std::ofstream(hold) << "";
    demo_jvm jvm(java_main{"OomHook"}, {"-Xmx32m", "-XX:OnOutOfMemoryError=/bin/sh " + dir.file("hook.sh")}, {});
    // Ends the hook (and with it the JVM) before the JVM is stopped, however the test ends.
    struct release_hook {
        std::string hold;
        ~release_hook() { std::filesystem::remove(hold); }
    } release{hold};
    ASSERT_TRUE(jvm.ready());
    for (int i = 0; i < 600 && !std::filesystem::exists(mark); ++i) ::usleep(100000);
    ASSERT_TRUE(std::filesystem::exists(mark));
    auto r = heapd_stack({std::to_string(jvm.pid()), "--timeout", "3"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("the JVM did not answer"), std::string::npos) << r.err;
    auto at = r.out.find("\"VM Thread\" tid ");
    ASSERT_NE(at, std::string::npos) << r.out;
    std::string vm_thread = r.out.substr(at, r.out.find("\n\n", at) - at);
    EXPECT_NE(vm_thread.find("os::fork_and_exec("), std::string::npos) << vm_thread;
    EXPECT_NE(vm_thread.find("VM_ReportJavaOutOfMemory::doit()"), std::string::npos) << vm_thread;
    // Beside the native frames, the serviceability agent names the Java frames of the thread that
    // ran out of memory, under that thread's native stack.
    EXPECT_TRUE(r.out.starts_with("# The JVM did not answer (")) << r.out.substr(0, 300);
    EXPECT_NE(r.out.find("with each Java thread's Java frames read by the serviceability agent"), std::string::npos)
        << r.out.substr(0, 300);
    const auto java = r.out.find(" - OomHook.main(");
    ASSERT_NE(java, std::string::npos) << r.out;
    const auto thread = r.out.rfind("\n\n\"", java);
    ASSERT_NE(thread, std::string::npos);
    const std::string oom_thread = r.out.substr(thread + 2, java - thread);
    EXPECT_NE(oom_thread.find("  Java (serviceability agent):\n"), std::string::npos) << oom_thread;
    EXPECT_NE(oom_thread.find("  #0 "), std::string::npos) << oom_thread;  // its native frames come first
    EXPECT_TRUE(untraced(jvm.pid()));
}

TEST(stack_command, missing_process) {
    pid_t pid = dead_pid();
    for (bool native : {false, true}) {
        std::vector<std::string> args = {std::to_string(pid)};
        if (native) args.push_back("--native");
        auto r = heapd_stack(args);
        EXPECT_EQ(r.exit_code, 2);
        EXPECT_NE(r.err.find("no process " + std::to_string(pid)), std::string::npos) << r.err;
        EXPECT_EQ(r.out, "");
    }
}

TEST(stack_command, process_we_may_not_trace) {
    demo_jvm jvm({"-Xmx64m"});
    ASSERT_TRUE(jvm.ready());
    temp_user user;
    ASSERT_TRUE(user.ok());
    auto r = run_command({"setpriv", "--reuid=" + std::to_string(user.uid()), "--regid=" + std::to_string(user.gid()),
                          "--clear-groups", heapd_binary(), "stack", std::to_string(jvm.pid()), "--native"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("may not trace process " + std::to_string(jvm.pid())), std::string::npos) << r.err;
    EXPECT_TRUE(untraced(jvm.pid()));
    EXPECT_EQ(jvm.jcmd({"VM.version"}).exit_code, 0);
    // Its own user may, without privileges.
    isolation as_user;
    as_user.user = &user;
    isolated_jvm own(java_main{"Demo"}, {"-Xmx64m"}, {}, as_user);
    ASSERT_TRUE(own.ready());
    auto mine =
        run_command({"setpriv", "--reuid=" + std::to_string(user.uid()), "--regid=" + std::to_string(user.gid()),
                     "--clear-groups", heapd_binary(), "stack", std::to_string(own.pid()), "--native"});
    EXPECT_EQ(mine.exit_code, 0) << mine.err;
    EXPECT_NE(mine.out.find("\"VM Thread\" tid "), std::string::npos) << mine.out;
    EXPECT_TRUE(untraced(own.pid()));
}

TEST(stack_command, process_that_is_no_jvm) {
    sleeper s;
    auto r = heapd_stack({std::to_string(s.pid)});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("not a HotSpot JVM (not signalled) (not_a_jvm)"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--native"), std::string::npos) << r.err;
    EXPECT_NE(task_state(s.pid, s.pid), '\0') << "signalled a process that does not handle SIGQUIT";
    auto native = heapd_stack({std::to_string(s.pid), "--native"});
    ASSERT_EQ(native.exit_code, 0) << native.err;
    EXPECT_NE(native.out.find("\"sleep\" tid " + std::to_string(s.pid)), std::string::npos) << native.out;
    EXPECT_TRUE(untraced(s.pid));
}

TEST(stack_command, usage_errors_exit_1) {
    EXPECT_EQ(heapd_stack({}).exit_code, 1);
    EXPECT_EQ(heapd_stack({"abc"}).exit_code, 1);
    EXPECT_EQ(heapd_stack({"0"}).exit_code, 1);
    EXPECT_EQ(heapd_stack({"1", "--timeout", "0"}).exit_code, 1);
}

}  // namespace
}  // namespace heapd::test
