#include "daemon/jvms/container_cgroup.h"

#include <vector>

namespace heapd::daemon {
namespace {

bool is_id(std::string_view s) {
    if (s.size() != 64) return false;
    for (char c : s)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    return true;
}

std::vector<std::string_view> components(std::string_view path) {
    std::vector<std::string_view> out;
    while (!path.empty()) {
        const std::size_t slash = path.find('/');
        const std::string_view c = path.substr(0, slash);
        if (!c.empty()) out.push_back(c);
        if (slash == std::string_view::npos) break;
        path.remove_prefix(slash + 1);
    }
    return out;
}

// "pod<uid>" (cgroupfs) or "kubepods-<class>-pod<uid with _>.slice" (systemd): the UID, with dashes.
std::string pod_uid_of(std::string_view c) {
    if (c.ends_with(".slice")) c.remove_suffix(6);
    const std::size_t at = c.starts_with("pod") ? 0 : c.rfind("-pod");
    if (at == std::string_view::npos) return {};
    std::string uid(c.substr(at + (at == 0 ? 3 : 4)));
    for (char& ch : uid)
        if (ch == '_') ch = '-';
    if (uid.size() != 36) return {};
    for (char ch : uid)
        if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || ch == '-')) return {};
    return uid;
}

// One cgroup path's innermost container.
std::optional<cgroup_container> container_of_path(std::string_view path) {
    const auto parts = components(path);
    for (std::size_t i = parts.size(); i-- > 0;) {
        std::string_view c = parts[i];
        if (c.ends_with(".scope")) c.remove_suffix(6);
        cgroup_container found;
        // The runtimes' prefixes; their monitors' own cgroups (conmon) are not the container.
        static constexpr std::pair<std::string_view, std::string_view> prefixes[] = {
            {"libpod-", "podman"}, {"docker-", "docker"}, {"cri-containerd-", "containerd"}, {"crio-", "cri-o"}};
        for (const auto& [prefix, runtime] : prefixes)
            if (c.starts_with(prefix) && is_id(c.substr(prefix.size()))) {
                found.runtime = runtime;
                found.id = c.substr(prefix.size());
            }
        if (found.id.empty() && is_id(c)) {
            found.id = c;
            const std::string_view parent = i > 0 ? parts[i - 1] : std::string_view();
            found.runtime = parent == "docker"            ? "docker"
                            : parent == "libpod_parent"   ? "podman"
                            : !pod_uid_of(parent).empty() ? "cri"
                                                          : "";
        }
        if (found.id.empty()) continue;
        for (std::size_t j = i; j-- > 0;)
            if (auto uid = pod_uid_of(parts[j]); !uid.empty()) {
                found.pod_uid = uid;
                break;
            }
        return found;
    }
    return std::nullopt;
}

bool dns_label_chars(std::string_view s) {
    if (s.empty() || s.size() > 253) return false;
    for (char c : s)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
    return true;
}

bool alnum_lower(std::string_view s) {
    for (char c : s)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
    return !s.empty();
}

}  // namespace

std::optional<cgroup_container> container_of_cgroup(std::string_view text) {
    // Every hierarchy's line names the same place but for controllers a runtime does not use: the
    // first line with a container wins (v2 has one line, "0::PATH").
    while (!text.empty()) {
        const std::size_t end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
        const std::size_t first = line.find(':');
        const std::size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
        if (second == std::string_view::npos) continue;
        if (auto c = container_of_path(line.substr(second + 1))) return c;
    }
    return std::nullopt;
}

std::optional<kubernetes_names> names_of_log_link(std::string_view name, std::string_view id) {
    const std::string suffix = "-" + std::string(id) + ".log";
    if (id.empty() || !name.ends_with(suffix)) return std::nullopt;
    name.remove_suffix(suffix.size());
    const std::size_t a = name.find('_');
    const std::size_t b = a == std::string_view::npos ? a : name.find('_', a + 1);
    if (b == std::string_view::npos || name.find('_', b + 1) != std::string_view::npos) return std::nullopt;
    kubernetes_names k{std::string(name.substr(0, a)), std::string(name.substr(a + 1, b - a - 1)),
                       std::string(name.substr(b + 1))};
    if (!dns_label_chars(k.pod) || !dns_label_chars(k.pod_namespace) || !dns_label_chars(k.container))
        return std::nullopt;
    return k;
}

std::string workload_of_pod(std::string_view pod) {
    const std::size_t last = pod.rfind('-');
    if (last == std::string_view::npos || last == 0) return std::string(pod);
    const std::string_view tail = pod.substr(last + 1), head = pod.substr(0, last);
    // StatefulSet: name-<ordinal>.
    if (!tail.empty() && tail.find_first_not_of("0123456789") == std::string_view::npos) return std::string(head);
    // The 5 random characters of a ReplicaSet's, DaemonSet's or Job's pod (no vowels, no 0, 1, 3).
    if (tail.size() != 5 || !alnum_lower(tail) || tail.find_first_of("aeiou013") != std::string_view::npos)
        return std::string(pod);
    // A Deployment's ReplicaSet adds its pod-template hash, 6 to 10 of those characters.
    const std::size_t before = head.rfind('-');
    if (before != std::string_view::npos && before > 0) {
        const std::string_view hash = head.substr(before + 1);
        if (hash.size() >= 6 && hash.size() <= 10 && alnum_lower(hash) &&
            hash.find_first_of("aeiou013") == std::string_view::npos)
            return std::string(head.substr(0, before));
    }
    return std::string(head);
}

}  // namespace heapd::daemon
