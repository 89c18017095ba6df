#include "base/child_call.h"

#include <unistd.h>

#include <algorithm>
#include <utility>

namespace heapd {

result<child_answer> call_in_child(child_body body, const void* context, std::chrono::milliseconds limit,
                                   std::size_t max_bytes) {
    auto child = child_process::fork(body, context);
    if (!child) return std::unexpected(child.error());
    child_limits limits;
    limits.deadline = child_limits::clock::now() + limit;
    limits.max_fds = 1;
    child_answer answer;
    const auto end = child->read(limits, [&](std::string_view bytes, std::vector<unique_fd>& fds) {
        answer.bytes.append(bytes.substr(0, max_bytes - std::min(max_bytes, answer.bytes.size())));
        if (!answer.fd && !fds.empty()) answer.fd = std::move(fds.front());
        return true;
    });
    answer.exit_code = child->wait().status();
    if (end == child_read_end::deadline)
        return fail(error_code::timed_out,
                    "a helper process did not finish within " + std::to_string(limit.count()) + " ms and was killed");
    return answer;
}

}  // namespace heapd
