#pragma once
// What heapctl's commands share: the parsed command line and how they print and complain.
#include <optional>
#include <string>
#include <vector>

#include "cli/daemon_client.h"
#include "formats/report/report_text.h"
#include "formats/wire/exit_codes.h"
#include "formats/wire/protocol.h"

namespace heapd::cli {

using namespace heapd::wire::exits;  // heapctl's exit statuses

// The command line, parsed.
struct options {
    std::string socket = default_socket();
    bool json = false;
    bool wait = false, all = false, fresh = false;
    std::optional<unsigned> top;
    unsigned roots = 1;
    std::string html;                       // (report, diff) also write the HTML page here
    unsigned sections = text_options::all;  // the parts of a report printed as text
    std::vector<std::string> words;         // the command and its arguments
};

// Prints "heapctl: MESSAGE" on stderr; returns code.
exit_code complain(const std::string& message, exit_code code);
exit_code complain(const client_error& e);
void print(const std::string& text);
void print_json(const wire::json& j);

// Store ids are letters, digits and dashes; a file name with a slash or a dot is a file.
bool looks_like_dump_id(const std::string& s);
// A JVM's pid: digits only.
bool is_pid(const std::string& s);
// A dump's id and the time it was taken, from its metadata.
std::string dump_name(const wire::json& meta);

// heapctl diff, path (store_queries.cpp); growth since the previous dump, printed after a report.
int diff(const options& o);
// Writes the page to o.html and says where on stdout; the exit status (bad_input when it cannot be written).
int write_html(const options& o, const std::string& page);
int path(const options& o);
// heapctl sites and heapctl cpu (agent_requests.cpp): allocation sites and CPU samples taken by
// heapd's agent in a JVM.
int sites(const options& o);
// memory_request.cpp: heapctl memory PID.
int memory(const options& o);
void print_growth(const wire::json& growth);

}  // namespace heapd::cli
