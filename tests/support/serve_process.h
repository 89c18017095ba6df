#pragma once
// Test helpers for the daemon: a real `heapd serve --foreground` on a temporary socket and store,
// a raw protocol client, and a synthetic dump big enough that its analysis takes a while.
#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/wire/protocol.h"

namespace heapd::test {

// The build's heapctl executable.
std::string heapctl_binary();

// A directory under /tmp that every user may enter (0755), for sockets and files other users of
// a test must reach; removed with its contents on destruction.
class shared_dir {
public:
    shared_dir();
    ~shared_dir();
    shared_dir(const shared_dir&) = delete;
    shared_dir& operator=(const shared_dir&) = delete;
    const std::string& path() const { return path_; }
    std::string file(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

// `heapd serve --foreground --socket DIR/heapd.sock --store DIR/store [--oom-arm hooked] [extra]`, its stderr in
// DIR/heapd.log; stopped (SIGTERM, then SIGKILL) and its directory removed on destruction.
class serve_process {
public:
    // launcher, when given, runs before heapd (e.g. unshare and a shell that mounts something first).
    explicit serve_process(std::vector<std::string> extra_args = {}, std::vector<std::string> launcher = {});
    ~serve_process();
    serve_process(const serve_process&) = delete;
    serve_process& operator=(const serve_process&) = delete;

    // Starts the daemon (again, on the same socket and store) and waits until it answers (30 s).
    bool start();
    // Sends sig and waits for the process (30 s, then SIGKILL); its exit code, or 128 + signal.
    int stop(int sig = SIGTERM);
    bool ready() const { return ready_; }
    pid_t pid() const { return pid_; }
    const std::string& dir() const { return dir_.path(); }
    std::string socket() const { return dir_.file("heapd.sock"); }
    std::string store() const { return dir_.file("store"); }
    std::string log() const;
    // heapd's command line, after the launcher.
    std::vector<std::string> args() const;

private:
    shared_dir dir_;
    std::vector<std::string> extra_;
    std::vector<std::string> launcher_;
    pid_t pid_ = -1;
    bool ready_ = false;
};

// A client speaking the protocol directly, to send what heapctl never would.
class raw_client {
public:
    explicit raw_client(const std::string& socket_path);
    ~raw_client();
    raw_client(const raw_client&) = delete;
    raw_client& operator=(const raw_client&) = delete;
    bool connected() const { return fd_ >= 0; }
    int fd() const { return fd_; }
    bool send_bytes(std::string_view bytes, int pass_fd = -1);
    bool send_request(const wire::request& r, int pass_fd = -1);
    // The next reply, or nullopt when the daemon closed the connection or nothing came in time.
    std::optional<wire::reply> read_reply(std::chrono::milliseconds timeout = std::chrono::seconds(60));
    // True when the daemon closed the connection (after any replies still unread).
    bool closed_by_daemon(std::chrono::milliseconds timeout = std::chrono::seconds(30));
    void close();

private:
    int fd_ = -1;
    wire::frame_parser parser_{std::uint32_t{1} << 30};
};

class temp_user;
struct command_result;

// heapctl --socket (d's) ARGS, as user when given (setpriv, no supplementary groups).
command_result run_heapctl(const serve_process& d, std::vector<std::string> args, const temp_user* user = nullptr);

// Sends an analysis of path on c (wait or not); true when sent.
bool start_analysis(raw_client& c, const std::string& path, bool wait, std::uint64_t id = 1);

// Queues an analysis of path on c without waiting for it; its job id, or 0.
std::uint64_t queue_analysis(raw_client& c, const std::string& path);

// The pids of the analysis processes (heapd analyze-fd) working for the daemon whose store is store.
std::vector<pid_t> analysis_processes_of(const std::string& store);

// True when something under root is named as a half-written file (.tmp-*).
bool has_temp_files(const std::string& root);

// A launcher for serve_process that puts the daemon's store on a tmpfs of that size (e.g. "2m") in
// a mount namespace of the daemon's own, so it goes with the daemon.
std::vector<std::string> small_store_launcher(const std::string& size);

// A synthetic dump of 3 million objects with their arrays (225 MB, write_big_dump): its analysis
// takes a while (about 1.5 s on the project's machine), long enough to act while it runs. Made once
// per test process.
const std::string& big_dump();

// Writes a synthetic dump of about items × 67 bytes: a static array holding `items` objects, each
// with its own byte[16], in buckets of 1,000, so the whole heap is one leak suspect.
bool write_big_dump(const std::string& path, unsigned items);

}  // namespace heapd::test
