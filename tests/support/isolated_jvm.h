#pragma once
// Test JVMs the way fleets run them: as another user, and inside a container (own mount and pid
// namespaces with a private tmpfs /tmp), with guards that remove every user and process they made.
#include <sys/types.h>
#include <string>
#include <vector>

#include "support/jvm_process.h"

namespace heapd::test {

// A system user made for one test (useradd), removed (userdel) on destruction.
class temp_user {
public:
    temp_user();
    ~temp_user();
    temp_user(const temp_user&) = delete;
    temp_user& operator=(const temp_user&) = delete;
    bool ok() const { return uid_ != static_cast<uid_t>(-1); }
    const std::string& name() const { return name_; }
    uid_t uid() const { return uid_; }
    gid_t gid() const { return gid_; }

private:
    std::string name_;
    uid_t uid_ = static_cast<uid_t>(-1);
    gid_t gid_ = static_cast<gid_t>(-1);
};

// How to isolate a test JVM, e.g. {&user, true}: as that user, in a container.
struct isolation {
    isolation() = default;
    isolation(const temp_user* u, bool in_container, std::string dir = {}, std::vector<std::string> volumes = {})
        : user(u), container(in_container), workdir(std::move(dir)), shared(std::move(volumes)) {}
    const temp_user* user = nullptr;  // run as this user (setpriv), else as the caller
    bool container = false;           // new mount and pid namespaces, a private tmpfs on /tmp
    std::string workdir;              // the JVM's working directory (inside the container: a host path it sees)
    std::vector<std::string> shared;  // host directories under /tmp the container still sees, at the same path
                                      // (bind-mounted over its tmpfs, as a volume)
    std::string tmp_size;             // the container's tmpfs /tmp size ("8m"), "" for tmpfs's default
    bool own_jdk = false;             // the JDK bound at /tmp/jdk inside the container and run from there:
                                      // a path only the container has, as for a JDK of its image
};

// A JVM running a program of tests/java under an isolation; killed (with its namespace) on destruction.
class isolated_jvm {
public:
    isolated_jvm(const java_main& main_class, const std::vector<std::string>& jvm_flags,
                 const std::vector<std::string>& args, const isolation& how);
    ~isolated_jvm();
    isolated_jvm(const isolated_jvm&) = delete;
    isolated_jvm& operator=(const isolated_jvm&) = delete;

    bool ready() const { return ready_; }
    // The JVM's pid as the host sees it.
    pid_t pid() const { return jvm_pid_; }
    // The JVM's pid inside its pid namespace (1 in a container; pid() otherwise).
    pid_t ns_pid() const { return ns_pid_; }

private:
    pid_t launcher_ = -1;  // the process the test forked (unshare, setpriv or java itself)
    pid_t jvm_pid_ = -1, ns_pid_ = -1;
    bool ready_ = false;
};

// The pids of pid in each pid namespace it belongs to, outermost first (NSpid of /proc/PID/status).
std::vector<pid_t> ns_pids(pid_t pid);

}  // namespace heapd::test
