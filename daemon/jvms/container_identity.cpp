#include "daemon/jvms/container_identity.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "attach/process_info.h"
#include "base/child_call.h"
#include "base/fd_io.h"
#include "daemon/jvms/container_cgroup.h"

namespace heapd::daemon {
namespace {

constexpr std::size_t max_text = 253;               // a DNS name's length: every Kubernetes name fits
constexpr std::size_t max_config_bytes = 4u << 20;  // an OCI bundle's config.json, Docker's config.v2.json
constexpr std::size_t max_listed = 100000;          // names read from one directory
constexpr std::size_t max_remembered = 8192;

// A name as it is kept: at most max_text bytes of printable ASCII, anything else a '?'.
std::string clean(std::string_view s) {
    std::string out(s.substr(0, max_text));
    for (char& c : out)
        if (c < 0x21 || c > 0x7e) c = '?';
    return out;
}

std::optional<wire::json> read_json(const std::string& path) {
    auto text = read_small_file(path, max_config_bytes);
    if (!text) return std::nullopt;
    wire::json j = wire::json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return std::nullopt;
    return j;
}

std::string string_at(const wire::json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? clean(it->get<std::string>()) : std::string();
}

// Kubernetes' names from a runtime's annotations or labels (CRI-O's and Docker's keys, then containerd's).
void take_kubernetes(container_identity& c, const wire::json& a) {
    if (!a.is_object()) return;
    auto take = [&](std::string& into, const char* key) {
        if (into.empty()) into = string_at(a, key);
    };
    take(c.name, "io.kubernetes.container.name");
    take(c.pod, "io.kubernetes.pod.name");
    take(c.pod_namespace, "io.kubernetes.pod.namespace");
    take(c.pod_uid, "io.kubernetes.pod.uid");
    take(c.name, "io.kubernetes.cri.container-name");
    take(c.pod, "io.kubernetes.cri.sandbox-name");
    take(c.pod_namespace, "io.kubernetes.cri.sandbox-namespace");
    take(c.pod_uid, "io.kubernetes.cri.sandbox-uid");
    take(c.name, "nerdctl/name");
}

std::vector<std::string> list_dir(const std::string& path) {
    std::vector<std::string> out;
    DIR* d = ::opendir(path.c_str());
    if (!d) return out;
    while (dirent* e = ::readdir(d)) {
        if (out.size() >= max_listed) break;
        if (e->d_name[0] != '.') out.emplace_back(e->d_name);
    }
    ::closedir(d);
    return out;
}

// podman: the container's conmon, an ancestor of its processes, names it (-n NAME) beside its id (-c ID).
void podman_name(container_identity& c, pid_t pid) {
    for (int step = 0; step < 16 && pid > 1; ++step) {
        auto stat = read_small_file(attach::proc_path(pid, "stat"), 4096);
        const std::size_t close = stat ? stat->rfind(')') : std::string::npos;
        if (close == std::string::npos) return;
        const std::size_t open = stat->find('(');
        const std::string comm = stat->substr(open + 1, close - open - 1);
        if (comm == "conmon") {
            auto line = read_small_file(attach::proc_path(pid, "cmdline"), 64 * 1024);
            if (!line) return;
            std::vector<std::string> argv;
            for (std::size_t at = 0; at < line->size();) {
                const std::size_t end = std::min(line->size(), line->find('\0', at));
                argv.push_back(line->substr(at, end - at));
                at = end + 1;
            }
            std::string id, name;
            for (std::size_t i = 0; i + 1 < argv.size(); ++i) {
                if (argv[i] == "-c" || argv[i] == "--cid") id = argv[i + 1];
                if (argv[i] == "-n" || argv[i] == "--name") name = argv[i + 1];
            }
            if (id == c.id) c.name = clean(name);
            return;
        }
        // Field 4, after the state: the parent.
        pid = static_cast<pid_t>(std::strtol(stat->c_str() + close + 4, nullptr, 10));
    }
}

void docker_names(container_identity& c, const std::string& root) {
    auto j = read_json(root + "/var/lib/docker/containers/" + c.id + "/config.v2.json");
    if (!j) return;
    auto named = j->find("Name");
    std::string name = named != j->end() && named->is_string() ? named->get<std::string>() : std::string();
    if (name.starts_with('/')) name.erase(0, 1);
    if (auto config = j->find("Config"); config != j->end() && config->is_object())
        if (auto labels = config->find("Labels"); labels != config->end()) take_kubernetes(c, *labels);
    if (c.name.empty()) c.name = clean(name);
}

// An OCI bundle's annotations: containerd's (under each of its namespaces) and CRI-O's.
void bundle_names(container_identity& c, const std::string& root) {
    std::vector<std::string> bundles;
    const std::string tasks = root + "/run/containerd/io.containerd.runtime.v2.task";
    for (const std::string& ns : list_dir(tasks)) bundles.push_back(tasks + "/" + ns + "/" + c.id + "/config.json");
    for (const char* storage : {"/run/containers/storage", "/var/lib/containers/storage"})
        bundles.push_back(root + storage + "/overlay-containers/" + c.id + "/userdata/config.json");
    for (const std::string& path : bundles) {
        auto j = read_json(path);
        if (!j) continue;
        if (auto a = j->find("annotations"); a != j->end()) take_kubernetes(c, *a);
        if (!c.pod.empty()) return;
    }
}

// The kubelet's links /var/log/containers/<pod>_<namespace>_<container>-<id>.log.
void log_link_names(container_identity& c, const std::string& root) {
    for (const std::string& name : list_dir(root + "/var/log/containers"))
        if (auto k = names_of_log_link(name, c.id)) {
            if (c.pod.empty()) c.pod = k->pod;
            if (c.pod_namespace.empty()) c.pod_namespace = k->pod_namespace;
            if (c.name.empty()) c.name = k->container;
            return;
        }
}

// The hostname of pid's UTS namespace, when it is not this process's own.
int uts_child(int socket, const void* context) {
    const int ns = *static_cast<const int*>(context);
    if (::setns(ns, CLONE_NEWUTS) != 0) return 1;
    struct utsname u {};
    if (::uname(&u) != 0) return 1;
    return write_all(socket, u.nodename, ::strnlen(u.nodename, sizeof u.nodename)) ? 0 : 1;
}

// Whether pid's namespace of that kind is another than the host's: init's (pid 1's) when it may be
// read, else heapd's own. heapd may run in namespaces of its own (a service's private mounts, a
// test's hostname), which make nobody else a container (as attach/jvm_discovery.cpp judges).
bool other_than_hosts(pid_t pid, const char* kind) {
    struct stat theirs {};
    struct stat hosts {};
    const std::string leaf = std::string("ns/") + kind;
    if (::stat(attach::proc_path(pid, leaf).c_str(), &theirs) != 0) return false;
    if (::stat(attach::proc_path(1, leaf).c_str(), &hosts) != 0 && ::stat(("/proc/self/" + leaf).c_str(), &hosts) != 0)
        return false;
    return theirs.st_ino != hosts.st_ino;
}

std::string uts_hostname(pid_t pid) {
    if (!other_than_hosts(pid, "uts")) return {};
    unique_fd ns(::open(attach::proc_path(pid, "ns/uts").c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (!ns) return {};
    const int fd = ns.get();
    auto answer = call_in_child(uts_child, &fd, std::chrono::seconds(5), 256);
    if (!answer || answer->exit_code != 0) return {};
    return clean(answer->bytes);
}

}  // namespace

std::string container_identity::label() const {
    if (!pod.empty())
        return (pod_namespace.empty() ? "" : pod_namespace + "/") + pod + (name.empty() ? "" : "/" + name);
    if (!name.empty()) return name;
    if (!hostname.empty()) return hostname;
    return id.substr(0, 12);
}

std::string container_identity::workload() const {
    if (!pod.empty()) return workload_of_pod(pod);
    if (!name.empty()) return name;
    return hostname;
}

wire::json to_json(const container_identity& c) {
    wire::json j = wire::json::object();
    if (c.empty()) return j;
    for (const auto& [key, value] : {std::pair<const char*, const std::string&>{"runtime", c.runtime},
                                     {"id", c.id},
                                     {"name", c.name},
                                     {"hostname", c.hostname},
                                     {"pod", c.pod},
                                     {"pod_uid", c.pod_uid},
                                     {"namespace", c.pod_namespace}})
        if (!value.empty()) j[key] = value;
    j["label"] = c.label();
    j["workload"] = c.workload();
    return j;
}

container_identity container_identity_from_json(const wire::json& j) {
    container_identity c;
    if (!j.is_object()) return c;
    c.runtime = string_at(j, "runtime");
    c.id = string_at(j, "id");
    c.name = string_at(j, "name");
    c.hostname = string_at(j, "hostname");
    c.pod = string_at(j, "pod");
    c.pod_uid = string_at(j, "pod_uid");
    c.pod_namespace = string_at(j, "namespace");
    return c;
}

container_identity identify_container(pid_t pid, const std::string& host_root) {
    auto cgroup = read_small_file(attach::proc_path(pid, "cgroup"), 64 * 1024);
    auto found = cgroup ? container_of_cgroup(*cgroup) : std::nullopt;
    container_identity c = found ? names_of_container(*found, pid, host_root) : container_identity{};
    // A process of the host with a hostname of its own is no container.
    if (found || other_than_hosts(pid, "mnt") || other_than_hosts(pid, "pid")) c.hostname = uts_hostname(pid);
    return c;
}

container_identity names_of_container(const cgroup_container& found, pid_t pid, const std::string& host_root) {
    container_identity c;
    c.runtime = found.runtime;
    c.id = found.id;
    c.pod_uid = found.pod_uid;
    const std::string root = host_root == "/" ? std::string() : host_root;
    if (c.runtime == "podman" && pid > 0) podman_name(c, pid);
    if (c.runtime == "docker" || c.runtime == "") docker_names(c, root);
    if (c.runtime != "podman" && c.runtime != "docker") bundle_names(c, root);
    if (c.pod.empty() &&
        (!c.pod_uid.empty() || c.runtime == "cri" || c.runtime == "containerd" || c.runtime == "cri-o"))
        log_link_names(c, root);
    return c;
}

container_identity container_of(pid_t pid, std::uint64_t start_time) {
    static std::mutex mutex;
    static std::map<std::pair<pid_t, std::uint64_t>, container_identity> known;
    {
        std::lock_guard lock(mutex);
        if (auto it = known.find({pid, start_time}); it != known.end()) return it->second;
    }
    container_identity c = identify_container(pid);
    std::lock_guard lock(mutex);
    if (known.size() >= max_remembered) known.clear();
    known[{pid, start_time}] = c;
    return c;
}

}  // namespace heapd::daemon
