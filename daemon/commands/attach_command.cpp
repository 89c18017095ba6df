// `heapd attach PID COMMAND [ARGS...]`: one operation on a running JVM through its attach listener,
// printing what the JVM answers; the exit status says whether the JVM succeeded.
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "attach/attach_client.h"
#include "attach/heap_dump.h"
#include "daemon/commands/commands.h"

namespace heapd::daemon {
namespace {

// The options of one attach invocation.
struct attach_args {
    std::vector<std::string> words;  // PID COMMAND ARGS...
    double timeout_seconds = 10;
    std::string protocol = "auto";
};

std::optional<int> parse_int(std::string_view text) {
    int value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

void print_output(std::string_view bytes) {
    std::fwrite(bytes.data(), 1, bytes.size(), stdout);
    std::fflush(stdout);
}

int attach_error_exit(pid_t pid, const error_info& error) {
    std::fprintf(stderr, "heapd: attach %d: %s: %s\n", static_cast<int>(pid), error_code_name(error.code),
                 error.message.c_str());
    return attach_failed;
}

int status_exit(pid_t pid, int status) {
    if (status == 0) return ok;
    std::fprintf(stderr, "heapd: attach %d: the JVM reported status %d\n", static_cast<int>(pid), status);
    return jvm_failed;
}

// `dumpheap FILE [-live|-all] [GZIP_LEVEL]`: FILE is a path of our filesystem, whatever the JVM's.
int run_dump(pid_t pid, const std::vector<std::string>& args, const attach::attach_options& options) {
    if (args.empty() || args.size() > 3) {
        std::fprintf(stderr, "heapd: usage: heapd attach PID dumpheap FILE [-live|-all] [GZIP_LEVEL]\n");
        return usage;
    }
    attach::dump_options dump;
    if (args.size() > 1 && !args[1].empty()) {
        if (args[1] != "-live" && args[1] != "-all") {
            std::fprintf(stderr, "heapd: dumpheap: expected -live or -all, got %s\n", args[1].c_str());
            return usage;
        }
        dump.live = args[1] == "-live";
    }
    if (args.size() > 2 && !args[2].empty()) {
        auto level = parse_int(args[2]);
        if (!level || *level < 1 || *level > 9) {
            std::fprintf(stderr, "heapd: dumpheap: the gzip level is 1 to 9, got %s\n", args[2].c_str());
            return usage;
        }
        dump.gzip_level = *level;
    }
    std::error_code ec;
    if (std::filesystem::symlink_status(args[0], ec).type() != std::filesystem::file_type::not_found) {
        std::fprintf(stderr, "heapd: %s exists; a heap dump never overwrites a file\n", args[0].c_str());
        return bad_input;
    }
    auto reply = attach::dump_heap(pid, args[0], dump, options);
    if (!reply) return attach_error_exit(pid, reply.error());
    print_output(reply->reply.output);
    if (reply->written && !reply->staged_path.empty())
        std::fprintf(stderr, "heapd: the JVM wrote %s in its own filesystem; moved to %s\n", reply->staged_path.c_str(),
                     reply->path.c_str());
    if (reply->reply.status != 0) return status_exit(pid, reply->reply.status);
    if (!reply->written) {
        std::fprintf(stderr, "heapd: attach %d: the JVM wrote no dump\n", static_cast<int>(pid));
        return jvm_failed;
    }
    return ok;
}

int run_attach(const attach_args& a) {
    if (a.words.size() < 2) {
        std::fprintf(stderr, "heapd: usage: heapd attach PID COMMAND [ARGS...] [--timeout S]\n");
        return usage;
    }
    auto pid = parse_int(a.words[0]);
    if (!pid || *pid <= 0) {
        std::fprintf(stderr, "heapd: attach: %s is not a pid\n", a.words[0].c_str());
        return usage;
    }
    attach::attach_options options;
    options.timeout = std::chrono::milliseconds(static_cast<long long>(a.timeout_seconds * 1000));
    options.protocol = a.protocol == "1"   ? attach::protocol_choice::v1
                       : a.protocol == "2" ? attach::protocol_choice::v2
                                           : attach::protocol_choice::automatic;
    const std::string& command = a.words[1];
    std::vector<std::string> args(a.words.begin() + 2, a.words.end());
    if (command == "dumpheap") return run_dump(*pid, args, options);
    if (command == "jcmd" && args.size() > 1) {
        // A diagnostic command line travels as one argument.
        std::string line;
        for (const auto& word : args) line += (line.empty() ? "" : " ") + word;
        args = {line};
    }
    if (command == "load") {
        auto reply = attach::attach_command(*pid, {command, args}, options);
        if (!reply) return attach_error_exit(*pid, reply.error());
        print_output(reply->output);
        if (reply->status != 0) return status_exit(*pid, reply->status);
        auto code = attach::agent_return_code(reply->output);
        if (code && *code != 0) {
            std::fprintf(stderr, "heapd: attach %d: the agent returned %d\n", *pid, *code);
            return jvm_failed;
        }
        return ok;
    }
    options.on_output = print_output;
    auto reply = attach::attach_command(*pid, {command, args}, options);
    if (!reply) return attach_error_exit(*pid, reply.error());
    return status_exit(*pid, reply->status);
}

}  // namespace

void add_attach(CLI::App& app, int& status) {
    auto args = std::make_shared<attach_args>();
    CLI::App* sub =
        app.add_subcommand("attach", "Run one attach operation on a JVM (PID COMMAND [ARGS...]) and print its output");
    sub->add_option("--timeout", args->timeout_seconds,
                    "Seconds to attach, and the longest silence while waiting for the reply")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    sub->add_option("--protocol", args->protocol, "Attach protocol: auto (v2 when offered), 1 or 2")
        ->check(CLI::IsMember({"auto", "1", "2"}))
        ->capture_default_str();
    sub->allow_extras();
    sub->footer(
        "Usage: heapd attach PID COMMAND [ARGS...] [--timeout S] [--protocol auto|1|2]\n"
        "COMMAND: threaddump [-l|-e], inspectheap [-live|-all], jcmd LINE..., properties, agentProperties,\n"
        "  printflag NAME, setflag NAME VALUE, load LIBRARY [true|false] [OPTIONS],\n"
        "  dumpheap FILE [-live|-all] [GZIP_LEVEL] (FILE on this host, also for a JVM in a container)\n"
        "Exit status: 0 the JVM succeeded, 1 usage, 2 bad input, 3 the JVM reported a failure,\n"
        "  4 no conversation (no such process, not a JVM, attach disabled, not responding, permission denied)");
    sub->callback([args, &status, sub] {
        args->words = sub->remaining();
        status = run_attach(*args);
    });
}

}  // namespace heapd::daemon
