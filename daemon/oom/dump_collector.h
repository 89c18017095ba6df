#pragma once
// Collecting the OutOfMemoryError dump of a JVM that has no heapd hook: the daemon armed it (or it
// dumps to its own HeapDumpPath), so HotSpot writes the dump, closes it and may exit at once
// (-XX:+ExitOnOutOfMemoryError, its last thread dead) and its container be removed a moment later
// (`--rm`, a pod's restart). So the directory the dump goes to is watched (inotify, through a
// descriptor of it opened beneath the JVM's root, never through a link), the file is opened the
// moment it is made (a regular file of the JVM's user with one name, opened without following a
// link and without side effects: O_PATH first, then reopened once its kind is known) and held by
// descriptor, so that neither the JVM's exit nor its container's removal can take it away; once the
// JVM has closed it (or is gone), it is handed on as one OOM dump.
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include "base/error.h"
#include "base/unique_fd.h"
#include "daemon/jvms/jvm_identity.h"

namespace heapd::daemon {

// One JVM whose OOM dump the daemon collects itself.
struct collect_target {
    jvm_identity id;  // host pid and start time
    pid_t ns_pid = 0;
    uid_t uid = 0;  // the JVM's user: only a file of theirs is taken
    gid_t gid = 0;
    std::uint64_t pid_ns = 0, mnt_ns = 0;
    // HeapDumpPath as the JVM has it: a directory (the dump is java_pid<ns_pid>.hprof in it) or a
    // file; "" for the working directory. Relative to the working directory.
    std::string dump_path;
    std::string jvm, command;  // the JVM's version and command line, for the report
};

// A dump the JVM has written and closed (or left when it ended), held open.
struct collected_dump {
    collect_target target;
    std::string path;  // as the JVM names it
    unique_fd file;
};

// The names HotSpot gives the dumps to one HeapDumpPath: base, then base.1, base.2, ...
bool is_dump_name(std::string_view name, std::string_view base);

// Watches the dump directories of the JVMs it is given and hands on each dump once written.
class dump_collector {
public:
    using on_dump = std::function<void(collected_dump)>;
    // on_dump runs on io's thread.
    static result<std::unique_ptr<dump_collector>> open(boost::asio::io_context& io, on_dump on_dump);
    dump_collector(const dump_collector&) = delete;
    dump_collector& operator=(const dump_collector&) = delete;

    // From any thread: watch where the JVM will write its dump (again, with a new path, when called
    // again). Errors: the directory cannot be opened or watched.
    result<void> watch(const collect_target& target);
    // From any thread: the JVM is gone; a dump it made and did not close is handed on now.
    void forget(const jvm_identity& id);
    // JVMs watched now.
    std::size_t size() const;

private:
    // One JVM's watch.
    struct watched {
        collect_target target;
        std::string dir;   // the directory the JVM names, for the dump's path
        std::string base;  // the dump's file name
        int wd = -1;       // its directory's inotify watch (shared by JVMs with one directory)
        unique_fd dir_fd;  // O_PATH
        unique_fd file;    // the dump, once made
        std::string file_name;
        std::uint64_t stale_ino = 0;  // a file at that name before the watch: not this JVM's dump
        bool delivered = false;
        std::optional<collected_dump> pending;  // delivered, to hand on once the lock is let go
    };
    dump_collector(boost::asio::io_context& io, int fd, on_dump on_dump);
    void read_events();
    void parse(std::size_t n);  // the events in buffer_
    void handle(int wd, std::uint32_t mask, std::string_view name);
    // Opens name in w's directory when it is the JVM's dump; true when held.
    bool take(watched& w, std::string_view name);
    void deliver(watched& w);    // into w.pending
    void drain();                // what inotify has queued, read now (io thread)
    void release_watch(int wd);  // removed unless another JVM's directory is that one

    boost::asio::io_context& io_;
    boost::asio::posix::stream_descriptor inotify_;
    on_dump on_dump_;
    mutable std::mutex mutex_;
    std::map<jvm_identity, watched> watched_;
    alignas(8) char buffer_[8192];
};

}  // namespace heapd::daemon
