#pragma once
// A Unix datagram socket a test owns, standing in for the service manager's $NOTIFY_SOCKET or
// journald's socket: a thread takes every datagram as it comes (a sender never blocks on a full
// queue) and keeps it with the sender's pid (SCM_CREDENTIALS).
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace heapd::test {

// One datagram and who sent it.
struct datagram {
    std::string bytes;
    pid_t sender = -1;
};

// Binds path (mode 0666) and collects datagrams until destroyed.
class datagram_receiver {
public:
    explicit datagram_receiver(const std::string& path);
    ~datagram_receiver();
    datagram_receiver(const datagram_receiver&) = delete;
    datagram_receiver& operator=(const datagram_receiver&) = delete;

    bool ok() const { return fd_ >= 0; }
    // Everything received so far.
    std::vector<datagram> received() const;
    // Waits until done(received()) holds (at most timeout); whether it did.
    bool wait_for(const std::function<bool(const std::vector<datagram>&)>& done,
                  std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;

private:
    void run();

    int fd_ = -1, stop_pipe_[2] = {-1, -1};
    mutable std::mutex mutex_;
    std::vector<datagram> received_;
    std::thread thread_;
};

}  // namespace heapd::test
