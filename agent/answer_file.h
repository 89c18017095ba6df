#pragma once
// The agent's answer to a command, as JSON in a new file of the JVM's /tmp that heapd collects:
// the state of sampling and, for show and stop, the sites with their allocated and live estimates.
#include <cstdint>
#include <string>

#include "agent/agent_options.h"
#include "agent/cpu_table.h"
#include "agent/site_table.h"

namespace heapd::agent {

// What the agent says besides the tables.
struct answer_facts {
    command what = command::status;
    std::string error;  // empty when the command was carried out
    bool sampling = false;
    std::int64_t interval = 0;
    int depth = 0;
    double seconds = 0;              // since sampling started
    std::uint64_t ring_dropped = 0;  // samples no slot was free for
    std::uint64_t memory_bytes = 0;  // the agent's tables and ring, about
    bool cpu_sampling = false;
    int cpu_period_ms = 0;
    double cpu_seconds = 0;  // since CPU sampling started
};

// The answer as JSON; the allocation tables when given (for show and stop), the CPU samples when
// given (cpu_show, cpu_stop). Names from the JVM (modified UTF-8) are written as \u escapes beyond
// ASCII, so the text is plain ASCII.
std::string answer_json(const answer_facts& facts, const site_table* tables, const cpu_table* cpu = nullptr);

// Writes text to `path` whole: to a new file beside it (never an existing name, never through a
// link, mode 0600), then renamed to `path`, so whoever finds the name finds the whole answer. False
// with why in error.
bool write_answer(const std::string& path, const std::string& text, std::string& error);

}  // namespace heapd::agent
