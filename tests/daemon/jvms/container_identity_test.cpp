// Containers' names read from the runtimes' own files, laid out in a directory as a node lays them
// out (daemon/jvms/container_identity.h): Docker's config.v2.json (with the labels dockershim set),
// containerd's OCI bundle with the CRI's annotations, CRI-O's with its own, and the kubelet's log
// links when no bundle says more. podman's conmon and the UTS hostname are read from real
// containers in tests/e2e/zero_touch_test.cpp.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "daemon/jvms/container_identity.h"
#include "support/jvm_process.h"

namespace heapd::test {
namespace {

namespace fs = std::filesystem;
using daemon::cgroup_container;
using daemon::names_of_container;

const std::string id = "4c01db0b339c1dcc6a7a6f5cd5e7a1b1a2f4e5d6c7b8a9f0e1d2c3b4a5f6e7d8";
const std::string uid = "1f5e2b7c-3d4a-4b1e-9c8f-0a1b2c3d4e5f";

void write(const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << text;
}

TEST(container_identity, docker_names_a_container_and_dockershim_labels_name_its_pod) {
    scratch_dir root;
    write(root.file("var/lib/docker/containers/" + id + "/config.v2.json"),
          R"({"ID":")" + id + R"(","Name":"/billing-1","Config":{"Labels":{"maintainer":"x"}}})");
    auto c = names_of_container({"docker", id, ""}, 0, root.path());
    EXPECT_EQ(c.name, "billing-1");
    EXPECT_EQ(c.label(), "billing-1");
    EXPECT_EQ(c.workload(), "billing-1");
    write(root.file("var/lib/docker/containers/" + id + "/config.v2.json"),
          R"({"Name":"/k8s_app_checkout-7d9c5b8f6d-x2kq9_shop_)" + uid + R"(_0","Config":{"Labels":{)" +
              R"("io.kubernetes.container.name":"app","io.kubernetes.pod.name":"checkout-7d9c5b8f6d-x2kq9",)" +
              R"("io.kubernetes.pod.namespace":"shop","io.kubernetes.pod.uid":")" + uid + R"("}}})");
    auto k = names_of_container({"docker", id, uid}, 0, root.path());
    EXPECT_EQ(k.name, "app");
    EXPECT_EQ(k.pod, "checkout-7d9c5b8f6d-x2kq9");
    EXPECT_EQ(k.pod_namespace, "shop");
    EXPECT_EQ(k.label(), "shop/checkout-7d9c5b8f6d-x2kq9/app");
    EXPECT_EQ(k.workload(), "checkout");
}

TEST(container_identity, containerd_and_cri_o_bundles_name_the_pod_by_their_annotations) {
    scratch_dir root;
    write(root.file("run/containerd/io.containerd.runtime.v2.task/k8s.io/" + id + "/config.json"),
          R"({"ociVersion":"1.1.0","annotations":{"io.kubernetes.cri.container-type":"container",)"
          R"("io.kubernetes.cri.container-name":"app","io.kubernetes.cri.sandbox-name":"kafka-0",)"
          R"("io.kubernetes.cri.sandbox-namespace":"data","io.kubernetes.cri.sandbox-uid":")" +
              uid + R"("}})");
    auto c = names_of_container({"containerd", id, uid}, 0, root.path());
    EXPECT_EQ(c.label(), "data/kafka-0/app");
    EXPECT_EQ(c.workload(), "kafka");
    EXPECT_EQ(c.pod_uid, uid);

    scratch_dir crio;
    write(crio.file("run/containers/storage/overlay-containers/" + id + "/userdata/config.json"),
          R"({"annotations":{"io.kubernetes.container.name":"api","io.kubernetes.pod.name":"api-5f7b9c6d48-z2wxq",)"
          R"("io.kubernetes.pod.namespace":"prod","io.kubernetes.pod.uid":")" +
              uid + R"("}})");
    auto o = names_of_container({"cri-o", id, uid}, 0, crio.path());
    EXPECT_EQ(o.label(), "prod/api-5f7b9c6d48-z2wxq/api");
    EXPECT_EQ(o.workload(), "api");
}

TEST(container_identity, the_kubelets_log_links_name_a_pod_no_bundle_names) {
    scratch_dir root;
    fs::create_directories(root.file("var/log/containers"));
    fs::create_symlink("/var/log/pods/x/app/0.log",
                       root.file("var/log/containers/web-6c8d9f7b5c-q4wz8_front_nginx-" + id + ".log"));
    fs::create_symlink("/nowhere", root.file("var/log/containers/other_front_nginx-" + std::string(64, 'e') + ".log"));
    auto c = names_of_container({"cri", id, uid}, 0, root.path());
    EXPECT_EQ(c.label(), "front/web-6c8d9f7b5c-q4wz8/nginx");
    EXPECT_EQ(c.workload(), "web");
}

TEST(container_identity, damaged_or_missing_files_leave_only_what_the_cgroup_said) {
    scratch_dir root;
    write(root.file("var/lib/docker/containers/" + id + "/config.v2.json"), "{not json");
    write(root.file("run/containerd/io.containerd.runtime.v2.task/k8s.io/" + id + "/config.json"),
          R"({"annotations":{"io.kubernetes.cri.sandbox-name":["not","a","string"]}})");
    auto d = names_of_container({"docker", id, ""}, 0, root.path());
    EXPECT_EQ(d.name, "");
    EXPECT_EQ(d.label(), id.substr(0, 12));
    auto c = names_of_container({"containerd", id, ""}, 0, root.path());
    EXPECT_EQ(c.pod, "");
    // Names are kept printable and bounded.
    write(root.file("var/lib/docker/containers/" + id + "/config.v2.json"),
          "{\"Name\":\"/a\\u001b[31mb " + std::string(400, 'x') + "\"}");
    auto w = names_of_container({"docker", id, ""}, 0, root.path());
    EXPECT_EQ(w.name.substr(0, 7), "a?[31mb");
    EXPECT_EQ(w.name.size(), 253u);
    // Kept and read back as JSON.
    auto back = daemon::container_identity_from_json(daemon::to_json(c));
    EXPECT_EQ(back.id, id);
    EXPECT_EQ(back.runtime, "containerd");
    EXPECT_TRUE(daemon::to_json(daemon::container_identity{}).empty());
}

// A process started by `unshare OPTIONS sh -c 'hostname NAME; exec sleep 30'`, killed at the end.
struct unshared {
    explicit unshared(const std::vector<std::string>& options) {
        pid = ::fork();
        if (pid == 0) {
            std::vector<std::string> argv = {"unshare"};
            argv.insert(argv.end(), options.begin(), options.end());
            argv.insert(argv.end(), {"sh", "-c", "hostname other-host && exec sleep 30"});
            std::vector<char*> a;
            for (std::string& w : argv) a.push_back(w.data());
            a.push_back(nullptr);
            ::execvp(a[0], a.data());
            ::_exit(127);
        }
        // Until it has its hostname: its command is sleep once it has set it.
        for (int i = 0; i < 100; ++i) {
            std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
            std::string name;
            if (comm >> name && name == "sleep") break;
            ::usleep(20000);
        }
    }
    ~unshared() {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }
    pid_t pid = -1;
};

TEST(container_identity, a_hostname_of_its_own_makes_no_container_but_names_one) {
    if (::geteuid() != 0) GTEST_SKIP() << "namespaces need root";
    // A process of the host in a UTS namespace of its own (as a test's daemon may be): no container.
    unshared host({"--uts"});
    EXPECT_TRUE(daemon::identify_container(host.pid).empty());
    // With mount namespace of its own too, it is one, named by its hostname.
    unshared contained({"--uts", "--mount"});
    const auto c = daemon::identify_container(contained.pid);
    EXPECT_EQ(c.hostname, "other-host");
    EXPECT_EQ(c.label(), "other-host");
    // The host's own processes: nothing.
    EXPECT_TRUE(daemon::identify_container(::getpid()).empty());
}

}  // namespace
}  // namespace heapd::test
