#pragma once
// Whether a JVM refuses attach (-XX:+DisableAttachMechanism), found without attaching, so that a
// disabled JVM is reported at once instead of after a timeout (and is never signalled).
#include <optional>
#include <string_view>

#include "attach/process_info.h"

namespace heapd::attach {

// The value of the string counter `name` in an hsperfdata buffer (the prologue's byte order, entries
// walked with bounds checks); nullopt when the buffer is no hsperfdata or holds no such string.
std::optional<std::string_view> perf_string(std::string_view buffer, std::string_view name);

// Whether the JVM disabled attach: from `sun.rt.jvmCapabilities` in its hsperfdata file (the first
// character is '1' when attach is supported), else from -XX:±DisableAttachMechanism on its command
// line and in JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS and _JAVA_OPTIONS (the last one wins). nullopt:
// nothing could be read (-XX:-UsePerfData and another user's environment, say).
std::optional<bool> attach_disabled(const process_info& target);

}  // namespace heapd::attach
