#include "attach/attach_error.h"

namespace heapd::attach {

const char* attach_code_name(attach_code code) {
    switch (code) {
    case attach_code::no_such_process: return "no_such_process";
    case attach_code::not_a_jvm: return "not_a_jvm";
    case attach_code::attach_disabled: return "attach_disabled";
    case attach_code::not_responding: return "not_responding";
    case attach_code::permission_denied: return "permission_denied";
    case attach_code::protocol: return "protocol";
    case attach_code::io: return "io";
    }
    return "unknown";
}

} // namespace heapd::attach
