#pragma once
// Watches the spool directory while the daemon runs (inotify): a request the OOM hook spooled
// because the daemon could not take it then (too busy, too many connections) is taken at once,
// not at the next start.
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include "base/error.h"

namespace heapd::daemon {

// Calls on_new (on the io_context's thread) whenever a file is renamed into, or written and closed
// in, the directory.
class spool_watcher {
public:
    static result<std::unique_ptr<spool_watcher>> watch(boost::asio::io_context& io, const std::string& dir,
                                                        std::function<void()> on_new);
    spool_watcher(const spool_watcher&) = delete;
    spool_watcher& operator=(const spool_watcher&) = delete;

private:
    spool_watcher(boost::asio::io_context& io, int fd, std::function<void()> on_new);
    void wait();

    boost::asio::posix::stream_descriptor inotify_;
    std::function<void()> on_new_;
    char buffer_[4096];
};

}  // namespace heapd::daemon
