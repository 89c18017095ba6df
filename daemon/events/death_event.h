#pragma once
// What heapd tells the host's log pipeline when a JVM it watched dies: one structured journal
// entry per death with heapd's MESSAGE_ID for deaths, a warning for an OOM kill or a crash
// (docs/memory.md, "Deaths").
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/deaths/death_record.h"

namespace heapd::daemon {

// The most bytes of text from outside (names, the command line) one journal field carries.
inline constexpr std::size_t journal_text_bytes = 512;

// MESSAGE_ID of a JVM's death (journalctl MESSAGE_ID=...).
inline constexpr std::string_view jvm_died_message_id = "5f0c8a3e27d94b6c9a1e4d7b3c62f018";

// The entry's fields, "NAME=value" each: MESSAGE, MESSAGE_ID, PRIORITY and HEAPD_* (record_id: the
// id of the record kept, death_store.h; "" when none was kept).
std::vector<std::string> journal_fields(const death_record& r, const std::string& record_id);

// Sends fields (journal_fields) to the journal; false when there is none to take them.
bool send_journal_fields(std::vector<std::string> fields);

}  // namespace heapd::daemon
