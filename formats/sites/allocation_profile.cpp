#include "formats/sites/allocation_profile.h"

#include "formats/hprof/java_names.h"
#include "formats/sites/internal/answer_reader.h"

namespace heapd::sites {

std::string java_type_name(std::string_view signature) {
    if (signature.size() >= 2 && signature.front() == 'L' && signature.back() == ';')
        signature = signature.substr(1, signature.size() - 2);
    return java_class_name(signature);
}

result<allocation_profile> parse_allocation_profile(std::string_view text) {
    if (text.size() > max_answer_bytes)
        return fail(error_code::bad_value, "the agent's answer is " + std::to_string(text.size()) +
                                               " bytes, more than the " + std::to_string(max_answer_bytes) +
                                               " allowed");
    return internal::read_answer(text);
}

}  // namespace heapd::sites
