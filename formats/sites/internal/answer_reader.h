#pragma once
// The agent's JSON answer read as it is parsed (nlohmann's SAX interface), straight into an
// allocation_profile: no document is built, so what an answer costs is what the profile keeps
// (names cut to max_name_bytes, tables capped at max_entries, frames at max_frames), not several
// times its bytes. Fields are checked as they arrive; what needs the whole answer (indices against
// the tables, fields that must be there) is checked once it has been read.
#include <string>
#include <string_view>

#include "base/error.h"
#include "formats/sites/allocation_profile.h"

namespace heapd::sites::internal {

// Reads text (at most max_answer_bytes, checked by the caller) into a profile. Errors: bad_value
// naming what is wrong, protocol for another protocol version.
result<allocation_profile> read_answer(std::string_view text);

}  // namespace heapd::sites::internal
