#pragma once
// Heap dumps through attach (`dumpheap`) that land at a path of the caller's filesystem whatever the
// JVM's is: a JVM in a container, or one running as another user, writes into its own /tmp, and the
// file is copied out of it to the path asked for, then its name removed there.
//
// The JVM's /tmp belongs to the JVM's owner, who can also answer the attach request themselves
// (serve the socket) and swap the staged name for a link, a FIFO or another file at any moment. So
// no name there is ever resolved by the caller (often root): the helper process opens the file with
// the JVM's own rights and O_NOFOLLOW, removes its name, and hands over the descriptor; the caller
// then takes only a regular file owned by the JVM's user with no name left (no hard link to anything
// else), no larger than max_bytes, and copies exactly its size into a new file of its own. A copy
// rather than a rename or link: a moved inode could still be held open for writing by the JVM's
// owner, and would keep their ownership until changed by path.
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>

#include "attach/attach_request.h"
#include "base/error.h"

namespace heapd::attach {

// What to dump.
struct dump_options {
    bool live = true;    // only reachable objects (the JVM runs a full GC first), else all
    int gzip_level = 0;  // 1-9 writes a gzip-compressed dump; 0 plain HPROF
    // A dump staged in the JVM's /tmp larger than this is refused, not copied (0: no bound).
    std::uint64_t max_bytes = 0;
    // Told the staged file's name before the JVM is asked to write it, so that a caller that may be
    // killed meanwhile can note it and remove it later (remove_staged_dump).
    std::function<void(const std::string& name)> on_staging{};
};

// A dump a JVM was asked to write in its /tmp, as noted by on_staging.
struct staged_dump {
    pid_t pid = 0;                 // host pid
    std::uint64_t start_time = 0;  // the process's start (clock ticks since boot)
    bool host_tmp = false;         // the JVM's /tmp was the caller's own /tmp
    std::string name;              // heapd-dump-*.hprof
};

// Removes a staged dump left behind (the caller was killed with its helper): its name in the
// JVM's /tmp while that JVM runs, else in our /tmp when it was ours. Only names of the form
// heapd-dump-*.hprof, never through a link. True when a file was removed.
bool remove_staged_dump(const staged_dump& staged);

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
result<dump_reply> dump_heap(pid_t pid, const std::string& path, const dump_options& dump = {},
                             const attach_options& options = {});

}  // namespace heapd::attach
