#include "attach/attach_client.h"

#include <algorithm>
#include <cstdlib>

#include "attach/attach_session.h"
#include "attach/internal/listener_protocol.h"

namespace heapd::attach {
namespace {

// The in-process sink of attach_socket: status into the reply, output to the reply or the callback.
struct socket_sink_state {
    attach_reply* reply;
    const attach_options* options;
};

bool sink_status(void* context, int status, int protocol) {
    auto* s = static_cast<socket_sink_state*>(context);
    s->reply->status = status;
    s->reply->protocol = protocol;
    return true;
}

bool sink_output(void* context, const char* data, std::size_t size) {
    auto* s = static_cast<socket_sink_state*>(context);
    if (s->options->on_output)
        s->options->on_output(std::string_view(data, size));
    else
        s->reply->output.append(data, size);
    return true;
}

attach_request make(std::string command, std::vector<std::string> args = {}) {
    return attach_request{std::move(command), std::move(args)};
}

}  // namespace

result<attach_reply> attach_command(pid_t pid, const attach_request& request, const attach_options& options) {
    return run_session(pid, request, options, nullptr);
}

result<attach_reply> attach_socket(const std::string& socket_path, const attach_request& request,
                                   const attach_options& options) {
    if (auto ok = check_request(request); !ok) return std::unexpected(ok.error());
    const prepared_request prepared = prepare(request, options);
    const std::int64_t timeout = std::max<std::int64_t>(options.timeout.count(), 1);
    const std::int64_t start = monotonic_ms();
    const std::int64_t hard = hard_deadline_of(options, start);
    attach_reply reply;
    socket_sink_state state{&reply, &options};
    reply_sink sink{&state, sink_status, sink_output, nullptr};
    listener_failure failure;
    if (!converse(socket_path.c_str(), prepared.plan(), std::min(start + timeout, hard), timeout, hard,
                  progress_watch{}, sink, failure))
        return fail(failure.code, failure.message);
    return reply;
}

result<attach_reply> thread_dump(pid_t pid, const attach_options& options, bool locks, bool extended) {
    std::string flags = std::string(locks ? "l" : "") + (extended ? "e" : "");
    return attach_command(pid, make("threaddump", {flags}), options);
}

result<attach_reply> inspect_heap(pid_t pid, bool live_only, const attach_options& options) {
    return attach_command(pid, make("inspectheap", {live_only ? "-live" : "-all"}), options);
}

result<attach_reply> diagnostic_command(pid_t pid, std::string_view command_line, const attach_options& options) {
    return attach_command(pid, make("jcmd", {std::string(command_line)}), options);
}

result<attach_reply> system_properties(pid_t pid, const attach_options& options) {
    return attach_command(pid, make("properties"), options);
}

result<attach_reply> agent_properties(pid_t pid, const attach_options& options) {
    return attach_command(pid, make("agentProperties"), options);
}

result<attach_reply> print_flag(pid_t pid, std::string_view name, const attach_options& options) {
    return attach_command(pid, make("printflag", {std::string(name)}), options);
}

result<attach_reply> set_flag(pid_t pid, std::string_view name, std::string_view value, const attach_options& options) {
    return attach_command(pid, make("setflag", {std::string(name), std::string(value)}), options);
}

std::optional<int> agent_return_code(std::string_view output) {
    constexpr std::string_view prefix = "return code: ";
    std::size_t at = output.find(prefix);
    if (at == std::string_view::npos) return std::nullopt;
    std::string digits(output.substr(at + prefix.size(), 12));
    char* end = nullptr;
    long code = std::strtol(digits.c_str(), &end, 10);
    if (end == digits.c_str()) return std::nullopt;
    return static_cast<int>(code);
}

result<load_reply> load_agent(pid_t pid, std::string_view library, bool absolute_path, std::string_view options,
                              const attach_options& options_) {
    attach_options collect = options_;  // the agent's code is read from the output
    collect.on_output = nullptr;
    auto reply = attach_command(
        pid, make("load", {std::string(library), absolute_path ? "true" : "false", std::string(options)}), collect);
    if (!reply) return std::unexpected(reply.error());
    load_reply out{*reply, std::nullopt};
    if (reply->status == 0) out.agent_code = agent_return_code(reply->output);
    return out;
}

}  // namespace heapd::attach
