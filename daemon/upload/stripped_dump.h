#pragma once
// The dump an upload sends when asked: the stored dump with every primitive array's contents
// zeroed (heapd strip) and gzip-compressed, written once into the uploader's work directory.
#include <string>

#include "base/error.h"

namespace heapd::daemon {

// Writes out_path (atomically, mode 0600) from the dump at dump_path (plain or gzip; a gzip dump is
// inflated into work_dir first): strip_dump's output streamed through a pipe into gzip, so only
// the compressed copy touches the disk.
result<void> write_stripped_gzip(const std::string& dump_path, const std::string& out_path,
                                 const std::string& work_dir);

}  // namespace heapd::daemon
