#include "formats/wire/error_kinds.h"

namespace heapd::wire {

error_kind kind_of(error_code code) {
    switch (code) {
    case error_code::not_found:
    case error_code::no_such_process:
    case error_code::not_a_jvm: return error_kind::not_found;
    case error_code::permission_denied: return error_kind::permission_denied;
    case error_code::cancelled: return error_kind::cancelled;
    case error_code::bad_magic:
    case error_code::bad_header:
    case error_code::out_of_bounds:
    case error_code::unknown_tag:
    case error_code::bad_value:
    case error_code::unsupported: return error_kind::bad_input;
    case error_code::no_space: return error_kind::no_space;
    case error_code::busy: return error_kind::busy;
    case error_code::io:
    case error_code::corrupt:
    case error_code::internal: return error_kind::internal;
    case error_code::attach_disabled:
    case error_code::not_responding:
    case error_code::protocol:
    case error_code::already_traced:
    case error_code::timed_out:
    case error_code::jvm_refused:
    case error_code::crashed:
    case error_code::out_of_memory:
    case error_code::agent_refused: return error_kind::failed;
    }
    return error_kind::internal;
}

}  // namespace heapd::wire
