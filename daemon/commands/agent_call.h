#pragma once
// What heapd sites and heapd cpu share: one command to heapd's agent in a JVM, its answer checked
// and its failure printed with the exit status it calls for.
#include <sys/types.h>

#include <expected>
#include <string>

#include "formats/sites/allocation_profile.h"
#include "formats/wire/exit_codes.h"

namespace heapd::daemon {

// How to reach the agent of one JVM.
struct agent_call {
    std::string name;  // the subcommand, for messages: "sites", "cpu"
    pid_t pid = 0;
    std::string library;  // found by attach::find_agent_library
    double timeout_seconds = 30;
    std::string save;  // when set, an answer with allocation tables is also written here

    // The agent's answer to command, or the exit status it calls for (its reason printed on stderr:
    // this is the edge of a command, where errors are printed and become exit statuses).
    std::expected<sites::allocation_profile, wire::exits::exit_code> run(const std::string& command) const;
};

}  // namespace heapd::daemon
