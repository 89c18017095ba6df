// The JVM's thread dump through the attach library.
#include "attach/thread_dump.h"

#include "attach/attach_client.h"

namespace heapd::attach {

result<std::string> java_thread_dump(pid_t pid, std::chrono::milliseconds timeout) {
    attach::attach_options options;
    options.timeout = timeout;
    auto reply = attach::attach_command(pid, attach::attach_request{"threaddump", {}}, options);
    if (!reply) return std::unexpected(reply.error());
    if (reply->status != 0)
        return fail(error_code::protocol,
                    "the JVM answered threaddump with status " + std::to_string(reply->status) + ": " + reply->output);
    return std::move(reply->output);
}

}  // namespace heapd::attach
