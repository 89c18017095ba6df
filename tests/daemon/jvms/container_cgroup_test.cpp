// Containers named by their cgroup paths as real nodes lay them out (daemon/jvms/container_cgroup.h):
// podman, Docker, containerd and CRI-O; cgroup v1 and v2; the cgroupfs and systemd drivers; the
// kubelet's pod cgroups of each QoS class; a node in a container (kind). The kubelet's log link
// names and the workload of a pod's name.
#include <gtest/gtest.h>

#include <string>

#include "daemon/jvms/container_cgroup.h"

namespace heapd::test {
namespace {

using daemon::container_of_cgroup;

const std::string id = "4c01db0b339c1dcc6a7a6f5cd5e7a1b1a2f4e5d6c7b8a9f0e1d2c3b4a5f6e7d8";
const std::string other = "9f8e7d6c5b4a39281706f5e4d3c2b1a0ffeeddccbbaa99887766554433221100";
const std::string uid = "1f5e2b7c-3d4a-4b1e-9c8f-0a1b2c3d4e5f";
const std::string uid_ = "1f5e2b7c_3d4a_4b1e_9c8f_0a1b2c3d4e5f";

void expect(const std::string& text, const std::string& runtime, const std::string& pod_uid = {}) {
    auto c = container_of_cgroup(text);
    ASSERT_TRUE(c.has_value()) << text;
    EXPECT_EQ(c->runtime, runtime) << text;
    EXPECT_EQ(c->id, id) << text;
    EXPECT_EQ(c->pod_uid, pod_uid) << text;
}

TEST(container_cgroup, podman_and_docker_under_each_driver_and_cgroup_version) {
    // podman on this kind of host (cgroup v1, cgroupfs): every hierarchy's line names it.
    expect("12:memory:/libpod_parent/libpod-" + id + "\n9:name=systemd:/libpod_parent/libpod-" + id + "\n", "podman");
    expect("0::/machine.slice/libpod-" + id + ".scope/container\n", "podman");  // v2, systemd
    expect("12:memory:/docker/" + id + "\n11:pids:/docker/" + id + "\n1:name=systemd:/docker/" + id + "\n", "docker");
    expect("0::/system.slice/docker-" + id + ".scope\n", "docker");
}

TEST(container_cgroup, kubernetes_pods_of_each_runtime_qos_class_and_driver) {
    expect("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + uid_ + ".slice/cri-containerd-" + id +
               ".scope\n",
           "containerd", uid);
    expect("11:memory:/kubepods/burstable/pod" + uid + "/" + id + "\n", "cri", uid);
    expect("11:memory:/kubepods/pod" + uid + "/" + id + "\n", "cri", uid);  // Guaranteed
    expect("10:memory:/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + uid_ + ".slice/crio-" + id +
               ".scope\n",
           "cri-o", uid);
    expect("0::/kubepods.slice/kubepods-pod" + uid_ + ".slice/docker-" + id + ".scope\n", "docker", uid);
    // A node that is itself a container (kind): the innermost container is the JVM's.
    expect("0::/docker/" + other + "/kubepods/burstable/pod" + uid + "/" + id + "\n", "cri", uid);
}

TEST(container_cgroup, processes_on_the_host_and_the_runtimes_monitors_are_in_no_container) {
    EXPECT_FALSE(container_of_cgroup("0::/user.slice/user-1000.slice/session-3.scope\n"));
    EXPECT_FALSE(container_of_cgroup("12:memory:/\n1:name=systemd:/init.scope\n"));
    EXPECT_FALSE(container_of_cgroup("0::/machine.slice/libpod-conmon-" + id + ".scope\n"));
    EXPECT_FALSE(
        container_of_cgroup("0::/kubepods.slice/kubepods-pod" + uid_ + ".slice/crio-conmon-" + id + ".scope\n"));
    EXPECT_FALSE(container_of_cgroup("0::/docker/" + id.substr(1) + "\n"));  // not an id
    EXPECT_FALSE(container_of_cgroup(""));
    EXPECT_FALSE(container_of_cgroup("garbage without colons"));
}

TEST(container_cgroup, kubelet_log_links_name_pod_namespace_and_container) {
    auto k = daemon::names_of_log_link("checkout-7d9c5b8f6d-x2kq9_shop_app-" + id + ".log", id);
    ASSERT_TRUE(k.has_value());
    EXPECT_EQ(k->pod, "checkout-7d9c5b8f6d-x2kq9");
    EXPECT_EQ(k->pod_namespace, "shop");
    EXPECT_EQ(k->container, "app");
    EXPECT_FALSE(daemon::names_of_log_link("checkout_shop_app-" + other + ".log", id));  // another container's
    EXPECT_FALSE(daemon::names_of_log_link("a_b_c_d-" + id + ".log", id));
    EXPECT_FALSE(daemon::names_of_log_link("A_shop_app-" + id + ".log", id));
    EXPECT_FALSE(daemon::names_of_log_link("checkout_shop_app-" + id + ".log", ""));
}

TEST(container_cgroup, the_workload_a_pod_name_comes_from) {
    using daemon::workload_of_pod;
    EXPECT_EQ(workload_of_pod("checkout-7d9c5b8f6d-x2kq9"), "checkout");  // Deployment
    EXPECT_EQ(workload_of_pod("order-service-5f7b9c6d48-z2wxq"), "order-service");
    EXPECT_EQ(workload_of_pod("kafka-0"), "kafka");  // StatefulSet
    EXPECT_EQ(workload_of_pod("zookeeper-12"), "zookeeper");
    EXPECT_EQ(workload_of_pod("node-exporter-4xj2p"), "node-exporter");  // DaemonSet, Job
    EXPECT_EQ(workload_of_pod("standalone"), "standalone");              // a bare pod
    EXPECT_EQ(workload_of_pod("web-abcde"), "web-abcde");                // not a generated suffix
    EXPECT_EQ(workload_of_pod("-"), "-");
}

}  // namespace
}  // namespace heapd::test
