#pragma once
// Test helpers for JVMs that run out of memory with heapd's OnOutOfMemoryError hook, the daemon
// running: the hook flag with time stamps, waiting for the hook, the JVM's end and the dump job, and
// the report that must name the leak.
#include <sys/types.h>

#include <string>

#include "formats/wire/protocol.h"
#include "support/serve_process.h"

namespace heapd::test {

// -XX:OnOutOfMemoryError running `HOOK dump %p --socket S --spool SPOOL [OPTIONS]` between two time
// stamps (dir/t0, dir/t1; HotSpot runs each ';'-separated command with /bin/sh -c, in order), its
// output in dir/hook.out. hook is heapd's binary unless given (e.g. a link to it by another name).
std::string hook_flag(const serve_process& d, const std::string& dir, const std::string& spool,
                      const std::string& hook = {}, const std::string& options = {});

// heapd's binary under another name (a link dir/oomhook): a hook the daemon does not take for its
// own, so it never arms the JVM, which then takes the path of a JVM that could not be armed.
std::string unarmed_hook(const std::string& dir);

// Waits until the hook has run (dir/t1 written), up to 120 s; its duration in ms, or -1.
double hook_ms(const std::string& dir);

// Waits (up to 180 s) until the daemon has a finished dump job (of the JVM pid, when given); its
// record ({} when none).
wire::json finished_dump_job(const serve_process& d, pid_t pid = 0);

// The `heapctl jvms` row of pid once the daemon has set its oom_arming state (up to 60 s), else {}.
wire::json armed_row(const serve_process& d, pid_t pid, const temp_user* as = nullptr);

// Waits for the process to end (up to 60 s): gone, or a zombie its parent reaps later.
bool ended(pid_t pid);

// heapctl report PID names "<main_class> (static CACHE)" → HashMap first, the only dump kept says
// trigger oom and pid. Adds gtest failures; the report's text for more checks.
std::string expect_leak_report(const serve_process& d, pid_t pid, const std::string& main_class,
                               const temp_user* as = nullptr);

// The whole of a small text file ("" when there is none).
std::string file_text(const std::string& path);

}  // namespace heapd::test
