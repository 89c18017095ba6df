#pragma once
// What a caller asks of a JVM's attach listener, how, and what comes back.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace heapd::attach {

// One attach operation: its name ("threaddump", "jcmd", "dumpheap", ...) and arguments.
struct attach_request {
    std::string command;
    std::vector<std::string> args;
};

// The JVM's answer: its completion status (0 is success, JNI_ERR = -1 a failure) and output.
struct attach_reply {
    int status = 0;
    std::string output;  // empty when attach_options::on_output took the output
    int protocol = 1;    // the protocol version the request was sent in (1, or 2 for JDK 24+)
};

// Which protocol version to speak.
enum class protocol_choice {
    automatic,  // ask with `getversion` and use v2 when the JVM offers it (what JDK 24's client does)
    v1,         // always v1: `1\0cmd\0a0\0a1\0a2\0`, at most 3 arguments of at most 1024 bytes
    v2,         // always v2 (fails on JVMs that do not offer it)
};

// How to attach.
struct attach_options {
    // Bounds the attach (trigger, listener start, connect, version probe) and the wait for the
    // reply: the reply must be whole this long after the conversation began, however its bytes
    // trickle in (not_responding otherwise). A request whose file grows meanwhile (a heap dump being
    // written) counts this long from the file's last growth instead, up to `limit`.
    std::chrono::milliseconds timeout{10000};
    // The whole conversation ends by this long after it began, whatever arrives or grows meanwhile
    // (not_responding). Zero: timeout.
    std::chrono::milliseconds limit{0};
    // Asked several times a second while the helper process talks to the JVM; true stops it at once
    // (the helper killed, any file it staged removed) with cancelled.
    std::function<bool()> cancelled;
    protocol_choice protocol = protocol_choice::automatic;
    // Ask a v2 JVM that offers the "streaming" option (JDK 25+) to stream (true) or buffer (false)
    // its output; unset leaves the JVM's default.
    std::optional<bool> streaming;
    // When set, the process must have this start time (clock ticks since boot, /proc/PID/stat field
    // 22): a pid that was reused by another process since it was found gives no_such_process.
    std::optional<std::uint64_t> expected_start_time;
    // When set, output goes here as it arrives instead of into attach_reply::output.
    std::function<void(std::string_view)> on_output;
    // attach_reply::output keeps at most this many bytes of the JVM's output (a listener may answer
    // with gigabytes); what is left out is read, counted and said at the end.
    std::size_t max_output_bytes = 4u << 20;
    // false: only a listener that is already up is talked to; when none is, not_responding at once,
    // and the JVM is never signalled (SIGQUIT): for a JVM in its OutOfMemoryError hook or exiting,
    // whose signal thread would print a thread dump into the application's output instead.
    bool may_signal = true;
};

}  // namespace heapd::attach
