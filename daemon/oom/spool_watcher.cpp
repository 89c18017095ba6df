#include "daemon/oom/spool_watcher.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace heapd::daemon {

result<std::unique_ptr<spool_watcher>> spool_watcher::watch(boost::asio::io_context& io, const std::string& dir,
                                                            std::function<void()> on_new) {
    int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd < 0) return fail_errno("cannot watch", dir);
    // IN_ONLYDIR|IN_DONT_FOLLOW: the spool itself, never what a link there would name.
    if (::inotify_add_watch(fd, dir.c_str(), IN_MOVED_TO | IN_CLOSE_WRITE | IN_ONLYDIR | IN_DONT_FOLLOW) < 0) {
        int e = errno;
        ::close(fd);
        errno = e;
        return fail_errno("cannot watch", dir);
    }
    std::unique_ptr<spool_watcher> w(new spool_watcher(io, fd, std::move(on_new)));
    w->wait();
    return w;
}

spool_watcher::spool_watcher(boost::asio::io_context& io, int fd, std::function<void()> on_new)
    : inotify_(io, fd), on_new_(std::move(on_new)) {}

void spool_watcher::wait() {
    // The events themselves do not matter (names are read from the directory): each read drains
    // what came, then the spool is taken once.
    inotify_.async_read_some(boost::asio::buffer(buffer_), [this](const boost::system::error_code& ec, std::size_t) {
        if (ec) return;  // cancelled: the daemon stops
        on_new_();
        wait();
    });
}

}  // namespace heapd::daemon
