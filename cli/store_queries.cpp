// heapctl's questions about stored dumps: diff and path, and the growth shown after a report.
#include <stdexcept>

#include "cli/command_line.h"
#include "cli/progress_bar.h"
#include "formats/report/report_html.h"
#include "formats/report/report_json.h"

namespace heapd::cli {

// What grew since the previous dump of the JVM ({previous, diff}), after its report.
void print_growth(const wire::json& growth) {
    auto diff = diff_from_json(growth.value("diff", wire::json::object()));
    if (!diff) return;
    print("\nSince the previous dump of this JVM (" + dump_name(growth.value("previous", wire::json::object())) +
          ")\n" + render_text(*diff, {10, 32, text_options::all}));
}

// heapctl diff PID | DUMP_A DUMP_B: what grew, per class.
int diff(const options& o) {
    wire::json args = {{"top", o.top.value_or(o.json ? 0 : 20)}};
    if (o.words.size() == 2 && is_pid(o.words[1]))
        args["pid"] = std::stoull(o.words[1]);
    else if (o.words.size() == 3 && looks_like_dump_id(o.words[1]) && looks_like_dump_id(o.words[2])) {
        args["before"] = o.words[1];
        args["after"] = o.words[2];
    } else {
        return complain("diff needs a PID or two DUMP ids (see heapctl --help; heapd diff compares files)", usage);
    }
    auto client = daemon_client::connect(o.socket);
    if (!client) return complain(client.error());
    auto result = client->call("diff", args);
    if (!result) return complain(result.error());
    auto d = diff_from_json(result->value("diff", wire::json::object()));
    if (!d) return complain("heapd's diff cannot be read: " + d.error().message, protocol_mismatch);
    const std::string title = "Dump " + dump_name(result->value("before", wire::json::object())) + " → dump " +
                              dump_name(result->value("after", wire::json::object()));
    if (!o.html.empty())
        if (int status = write_html(o, render_html(*d, title)); status != ok) return status;
    if (o.json) {
        print_json(*result);
        return ok;
    }
    print("Dump " + dump_name(result->value("before", wire::json::object())) + " → dump " +
          dump_name(result->value("after", wire::json::object())) + "\n" +
          render_text(*d, {o.top.value_or(20), 32, text_options::all}));
    return ok;
}

int write_html(const options& o, const std::string& page) {
    auto saved = save_html(o.html, page);
    if (!saved) return complain("--html " + saved.error().message, bad_input);
    std::fprintf(stderr, "heapctl: %s\n", saved->c_str());
    return ok;
}

// heapctl path DUMP|PID OBJECT_ID: the shortest paths from GC roots, found by the daemon.
int path(const options& o) {
    if (o.words.size() != 3) return complain("path needs a DUMP (or PID) and an OBJECT_ID (see heapctl --help)", usage);
    wire::json args = {{"roots", o.roots}, {"wait", true}};
    if (is_pid(o.words[1]))
        args["pid"] = std::stoull(o.words[1]);
    else if (looks_like_dump_id(o.words[1]))
        args["dump"] = o.words[1];
    else
        return complain(o.words[1] + " is neither a DUMP id nor a PID", usage);
    try {
        std::size_t used = 0;
        args["object"] = std::stoull(o.words[2], &used, 0);
        if (used != o.words[2].size() || o.words[2][0] == '-') throw std::invalid_argument(o.words[2]);
    } catch (const std::exception&) {
        return complain(o.words[2] + " is not an object id (0x-prefixed hex or decimal, as reports print them)", usage);
    }
    auto client = daemon_client::connect(o.socket);
    if (!client) return complain(client.error());
    progress_bar bar("object " + o.words[2]);
    auto result = client->call(
        "path", args, -1, [&bar](const wire::progress_event& e) { bar.update(e); }, [&bar] { bar.tick(); });
    bar.clear();
    if (!result) return complain(result.error());
    auto it = result->find("paths");
    if (it == result->end()) return complain("heapd's reply has no paths", protocol_mismatch);
    if (o.json) {
        print_json(*it);
        return ok;
    }
    auto paths = paths_from_json(*it);
    if (!paths) return complain("heapd's paths cannot be read: " + paths.error().message, protocol_mismatch);
    print(render_text(*paths));
    return ok;
}

}  // namespace heapd::cli
