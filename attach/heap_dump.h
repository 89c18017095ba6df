#pragma once
// Heap dumps through attach (`dumpheap`) that land at a path of the caller's filesystem whatever the
// JVM's is: a JVM in a container, or one running as another user, writes into its own /tmp, and the
// file is brought out through /proc/PID/root to the path asked for, then removed there.
#include <sys/types.h>

#include <string>

#include "attach/attach_error.h"
#include "attach/attach_request.h"

namespace heapd::attach {

// What to dump.
struct dump_options {
    bool live = true;    // only reachable objects (the JVM runs a full GC first), else all
    int gzip_level = 0;  // 1-9 writes a gzip-compressed dump; 0 plain HPROF
};

// What a dump request produced.
struct dump_reply {
    attach_reply reply;       // the JVM's status and output ("Heap dump file created [...]")
    bool written = false;     // the dump is at `path`
    std::string path;         // the absolute path asked for
    std::string staged_path;  // where the JVM wrote it in its own filesystem first ("" when in place)
};

// Dumps the heap of the JVM `pid` to `path` (relative to our working directory; it must not
// exist, as the JVM never overwrites a dump). The reply timeout counts silence: a dump file that
// keeps growing counts as an answer.
attach_result<dump_reply> dump_heap(pid_t pid, const std::string& path, const dump_options& dump = {},
                                    const attach_options& options = {});

} // namespace heapd::attach
