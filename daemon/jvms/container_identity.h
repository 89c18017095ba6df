#pragma once
// A JVM's container as the host can name it, without asking anything of the container: its
// runtime and id from its cgroup path (container_cgroup.h); its name from the runtime's own files
// (podman's conmon command line, Docker's config.v2.json, the OCI bundle containerd or CRI-O keeps
// with Kubernetes' annotations, the kubelet's log link names); the hostname of its UTS namespace
// (a pod's name, podman's --hostname), read by a child that joins it. These are the names the
// runtime and Kubernetes gave, or, for the hostname, what the container says: text for people
// and labels, never a reason to trust it.
#include <sys/types.h>

#include <cstdint>
#include <string>

#include "daemon/jvms/container_cgroup.h"
#include "formats/wire/protocol.h"

namespace heapd::daemon {

// The container a JVM runs in; empty for a JVM on the host.
struct container_identity {
    std::string runtime;                      // podman, docker, containerd, cri-o, cri, "" (unknown)
    std::string id;                           // 64 hex digits
    std::string name;                         // the runtime's name for it, or Kubernetes' container name
    std::string hostname;                     // of its UTS namespace, when it has its own
    std::string pod, pod_uid, pod_namespace;  // Kubernetes

    bool empty() const { return id.empty() && hostname.empty(); }
    // What people call it: "NAMESPACE/POD/CONTAINER" in Kubernetes, else its name, else its
    // hostname, else the first 12 digits of its id.
    std::string label() const;
    // The service it is one instance of: the pod's workload (workload_of_pod), else its name, else
    // its hostname; "" on the host.
    std::string workload() const;
};

// {"runtime", "id", "name", "hostname", "pod", "pod_uid", "namespace", "label", "workload"}, the
// empty ones left out; {} for none.
wire::json to_json(const container_identity& c);
container_identity container_identity_from_json(const wire::json& j);

// Names the container of pid from the host's files under host_root ("" for "/": tests lay out a
// node's files in a directory) and its /proc. Texts are bounded: 253 bytes each. A process is in a
// container when its cgroup path names one or its mount or pid namespace is not the host's (pid
// 1's, else heapd's own when pid 1's cannot be read); only then is its hostname taken, when its
// UTS namespace is not the host's either.
container_identity identify_container(pid_t pid, const std::string& host_root = {});

// The names of the container found on pid's cgroup path, from the runtimes' files under host_root
// and, for podman, pid's ancestors (pid 0: none); no hostname.
container_identity names_of_container(const cgroup_container& found, pid_t pid, const std::string& host_root);

// identify_container, remembered per process (pid and start time) for the daemon's lifetime
// (8,192 processes at most: past that, forgotten and read again). Any thread.
container_identity container_of(pid_t pid, std::uint64_t start_time);

}  // namespace heapd::daemon
