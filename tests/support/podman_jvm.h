#pragma once
// A JVM in a real container: podman with runc (this machine's cgroup hybrid mode stops crun), the
// host's own root as the image (--rootfs /:O: an overlay, no registry needed), a private tmpfs
// /tmp, its own mount, pid, UTS and network namespaces, a memory limit, removed (--rm) the moment
// the JVM exits, as a restarting pod's container is. Named and with the hostname of that name, as a
// pod's name is its hostname.
#include <sys/types.h>

#include <string>
#include <vector>

#include "support/jvm_process.h"

namespace heapd::test {

// What a container is started with.
struct container_spec {
    std::string name;                 // podman's name and the hostname; unique per test
    std::string memory = "300m";      // --memory
    std::vector<std::string> shared;  // host directories it sees at the same path (-v DIR:DIR)
};

// `podman run --rm ... java FLAGS -cp CLASSES MAIN ARGS`, its output in out_file; removed (with
// its JVM) on destruction.
class podman_jvm {
public:
    // Whether podman and runc are installed (tests skip without them).
    static bool available();
    podman_jvm(const container_spec& spec, const java_main& main_class, const std::vector<std::string>& jvm_flags,
               const std::vector<std::string>& args, const std::string& out_file);
    ~podman_jvm();
    podman_jvm(const podman_jvm&) = delete;
    podman_jvm& operator=(const podman_jvm&) = delete;

    // The JVM printed "ready" (up to 60 s).
    bool ready() const { return pid_ > 0; }
    // The JVM's pid as the host sees it.
    pid_t pid() const { return pid_; }
    // Whether podman still has the container (it is removed at the JVM's exit).
    bool exists() const;

private:
    std::string name_;
    pid_t podman_ = -1;  // the `podman run` process
    pid_t pid_ = -1;
};

}  // namespace heapd::test
