#pragma once
// The one error type of library code (base, attach, formats, the daemon's libraries): a code a
// caller can act on, a message for people that says what was tried and what happened, and, for a
// file, the offset it concerns. Libraries never print or log it; the daemon maps its code to the
// protocol's error kinds and heapctl to exit codes, each in one place (formats/wire/).
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

namespace heapd {

// What kind of failure an error_info reports; callers branch on this, people read the message.
enum class error_code {
    io,  // the operating system refused a call (open, mmap, write)
    // Files: a dump, a perf-data file, a config, a store's records.
    bad_magic,      // not an HPROF file
    bad_header,     // header fields out of range (identifier size, version)
    out_of_bounds,  // a length runs past its record, segment or the file
    unknown_tag,    // a record or sub-record tag this reader does not know
    bad_value,      // a field holds a value the format does not allow
    unsupported,    // valid input that this build cannot handle
    not_found,      // a requested object, class, thread, file or entry is absent
    cancelled,      // the caller asked to stop (analysis_options::phase_started)
    corrupt,        // what heapd wrote itself (the store's records, an index) does not read back
    // Processes: finding JVMs, attaching to them, tracing them.
    no_such_process,    // the pid does not exist (or exited meanwhile)
    not_a_jvm,          // the process is no HotSpot JVM, or it does not handle SIGQUIT (never signalled)
    attach_disabled,    // -XX:+DisableAttachMechanism, or no attach listener could be started
    not_responding,     // no answer within the timeout: stopped, at a long safepoint, or in an OOM hook
    permission_denied,  // the caller may not act on this process
    protocol,           // the JVM answered something this client does not understand
    already_traced,     // another tracer (a debugger) holds the process
    timed_out,          // a helper process did not finish within its time limit and was killed
    jvm_refused,        // the JVM answered but did not do it (a dump command that wrote no dump)
    // The daemon's own work.
    busy,           // too much under way at once (jobs queued, a dump of the same JVM); try later
    no_space,       // too little free space where a file was to be written (the store, a scratch directory)
    crashed,        // a helper process died of a signal before it answered (killed, out of memory)
    out_of_memory,  // the work needs more memory than it may take
    internal,       // a bug in heapd: an exception escaped, a helper wrote what it must not
    // The agent (agent/): the JVM would not load it, or it would not do what it was asked. The last
    // code: native_stacks.cpp checks the codes it decodes against it.
    agent_refused,
};

// A short stable name of the code ("not_responding"), for JSON and logs.
const char* error_code_name(error_code code);
// The code a name from error_code_name stands for; nothing for a name it never gives.
std::optional<error_code> error_code_from_name(std::string_view name);

// Describes one failure; offset is the file offset it concerns, or no_offset.
struct error_info {
    static constexpr std::uint64_t no_offset = ~std::uint64_t{0};
    error_code code = error_code::io;
    std::string message;
    std::uint64_t offset = no_offset;

    // The message with its offset appended, as shown to people.
    std::string describe() const;
};

template <class T>
using result = std::expected<T, error_info>;

inline std::unexpected<error_info> fail(error_code code, std::string message,
                                        std::uint64_t offset = error_info::no_offset) {
    return std::unexpected(error_info{code, std::move(message), offset});
}

// Builds an io error from errno with the path and the call that failed.
std::unexpected<error_info> fail_errno(const std::string& what, const std::string& path);

}  // namespace heapd
