#pragma once
// heapctl's answers for people: status, jobs, dumps, JVMs and their deaths as text from the daemon's JSON results.
#include <string>

#include "formats/wire/protocol.h"

namespace heapd::cli {

std::string status_text(const wire::json& status);
std::string jobs_text(const wire::json& jobs);           // the "jobs" array
std::string dumps_text(const wire::json& dumps);         // the "dumps" array
std::string dumps_reply_text(const wire::json& reply);   // the dumps, then the "damaged" entries kept aside
std::string jvms_text(const wire::json& jvms);           // the "jvms" array
std::string jvms_reply_text(const wire::json& reply);    // the JVMs, then those left out of the reply
std::string deaths_text(const wire::json& deaths);       // the "deaths" array
std::string deaths_reply_text(const wire::json& reply);  // the deaths, then those left out of the reply

// The label of the container an item (a JVM, dump or death) names ({"container": {"label"}}), safe on
// one line; "" when it has none.
std::string container_label(const wire::json& item);
// A user's name for a uid, or the number when it has none.
std::string user_name(long long uid);

}  // namespace heapd::cli
