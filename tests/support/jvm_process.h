#pragma once
// Test helpers that run real programs: a demo JVM started and stopped by the test, and commands.
#include <sys/types.h>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace heapd::test {

// What a finished command printed and how it ended.
struct command_result {
    int exit_code = -1;
    std::string out;  // standard output
    std::string err;  // standard error
};

// Runs argv (no shell) and waits for it; stdout and stderr captured separately.
command_result run_command(const std::vector<std::string>& argv);

// A process started by start_until_ready: its pid, and whether it printed "ready" in time.
struct started_process {
    pid_t pid = -1;
    bool ready = false;
};

// Forks and execs argv (in workdir when given), stdout to a pipe read until the process prints
// "ready" (at most 60 s), or to stdout_file (kept whole, for a test to read what the process printed
// later); stdin and stderr are inherited.
started_process start_until_ready(const std::vector<std::string>& argv, const std::string& workdir = {},
                                  const std::string& stdout_file = {});

// The build's heapd executable.
std::string heapd_binary();

// VisualVM's heap library (Debian package visualvm), an independent analyzer for comparisons.
std::string visualvm_heap_jar();

// The directory of the compiled programs of tests/java (compiled once per build into the build tree).
std::string test_classes_dir();

// Makes a running tests/java/Leaky add its batch of objects: writes its trigger file and waits (up
// to 120 s) until Leaky deletes it, which it does once the objects are in its list.
bool leaky_grow(const std::string& trigger);

// jstat's two lines (column names, then values) as name → value; a column shown as "-" gets dash.
std::map<std::string, double> jstat_columns(const std::string& text, double dash);
// `jstat -gc PID`: capacities and used bytes of each space in KiB, counts and seconds ("-" as 0).
std::map<std::string, double> jstat_gc(pid_t pid);

// The main class of a program in tests/java, e.g. java_main{"Shapes"}, and the JDK to run it with.
struct java_main {
    java_main(std::string main_class, std::string jdk = {}) : name(std::move(main_class)), jdk_bin(std::move(jdk)) {}
    std::string name;
    std::string jdk_bin;  // directory of java and jcmd, with a final '/'; empty: those on PATH
};

// The bin/ directory (with a final '/') of the JDK 25 these machines carry, or "" when there is none.
std::string jdk25_bin();

// A JVM running tests/java/Demo.java or another program of tests/java (compiled once per build into the build tree);
// killed on destruction.
class demo_jvm {
public:
    // Starts `java <jvm_flags> Demo <args>` and waits (up to 60 s) until it prints "ready".
    explicit demo_jvm(const std::vector<std::string>& jvm_flags, const std::vector<std::string>& args = {});
    // Starts `java <jvm_flags> MAIN_CLASS <args>` (a program of tests/java) and waits for "ready".
    // stdout_file, when given, receives everything the JVM prints on its standard output.
    demo_jvm(const java_main& main_class, const std::vector<std::string>& jvm_flags,
             const std::vector<std::string>& args, const std::string& stdout_file = {});
    ~demo_jvm();
    demo_jvm(const demo_jvm&) = delete;
    demo_jvm& operator=(const demo_jvm&) = delete;

    pid_t pid() const { return pid_; }
    bool ready() const { return ready_; }
    // `jcmd <pid> args...`
    command_result jcmd(const std::vector<std::string>& args) const;

private:
    pid_t pid_ = -1;
    bool ready_ = false;
    std::string jdk_bin_;
};

// A fresh directory under the build tree's test scratch area, removed on destruction.
class scratch_dir {
public:
    scratch_dir();
    ~scratch_dir();
    scratch_dir(const scratch_dir&) = delete;
    scratch_dir& operator=(const scratch_dir&) = delete;
    const std::string& path() const { return path_; }
    std::string file(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

}  // namespace heapd::test
