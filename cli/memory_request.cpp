// heapctl memory PID: where the memory of the JVM PID goes, against the limit that holds it (its
// memory cgroup's, else the host's), as the daemon reads it for whoever may dump the JVM.
#include "cli/command_line.h"
#include "formats/memory/memory_report.h"

namespace heapd::cli {

int memory(const options& o) {
    if (o.words.size() != 2 || !is_pid(o.words[1])) return complain("memory needs one PID", usage);
    auto client = daemon_client::connect(o.socket);
    if (!client) return complain(client.error());
    auto result = client->call("memory", {{"pid", std::stoll(o.words[1])}});
    if (!result) return complain(result.error());
    const auto it = result->find("memory");
    if (it == result->end()) return complain("heapd's reply has no memory", protocol_mismatch);
    auto b = breakdown_from_json(*it);
    if (!b) return complain("heapd's reply: " + b.error().message, protocol_mismatch);
    if (o.json)
        print_json(*it);
    else
        print(memory_text(*b));
    return ok;
}

}  // namespace heapd::cli
