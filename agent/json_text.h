#pragma once
// JSON strings as the agent writes them (its answer files, its request to heapd): plain ASCII.
#include <string>

namespace heapd::agent {

// Appends s, which is modified UTF-8 as JVMTI gives names, as a JSON string of ASCII: each UTF-16
// unit beyond ASCII, and each control character, escaped; a malformed sequence as U+FFFD.
void append_string(std::string& out, const std::string& s);

}  // namespace heapd::agent
