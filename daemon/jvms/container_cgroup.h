#pragma once
// Which container a process runs in, as its cgroup path says it (/proc/PID/cgroup), and the names
// Kubernetes gives on a node: the container runtimes' cgroup layouts (podman, Docker, containerd
// and CRI-O; cgroup v1 and v2; the cgroupfs and systemd drivers; the kubelet's pod cgroups), the log
// link names the kubelet makes (/var/log/containers), and the workload a pod's name comes from.
// Pure text: no file is read here.
#include <optional>
#include <string>
#include <string_view>

namespace heapd::daemon {

// A container as its cgroup path names it.
struct cgroup_container {
    // "podman", "docker", "containerd", "cri-o", "cri" (a bare id under a pod's cgroup: containerd
    // or CRI-O with the cgroupfs driver), "" (a bare id elsewhere)
    std::string runtime;
    std::string id;       // the container's id: 64 lowercase hex digits
    std::string pod_uid;  // the Kubernetes pod's UID when the path has the kubelet's pod cgroup
};

// The innermost container the text of /proc/PID/cgroup places the process in (the last id on its
// path: a container in a container is the inner one); nothing for a process in no container.
std::optional<cgroup_container> container_of_cgroup(std::string_view proc_cgroup);

// Kubernetes' names from a kubelet log link name, "<pod>_<namespace>_<container>-<id>.log", when it
// is that container's (id); names of pods, namespaces and containers hold no '_'.
struct kubernetes_names {
    std::string pod, pod_namespace, container;
};
std::optional<kubernetes_names> names_of_log_link(std::string_view file_name, std::string_view id);

// The workload a pod's name comes from: a Deployment's "<name>-<template hash>-<5 chars>", a
// StatefulSet's "<name>-<ordinal>", a DaemonSet's or Job's "<name>-<5 chars>"; the name itself
// when it has none of those forms.
std::string workload_of_pod(std::string_view pod);

}  // namespace heapd::daemon
