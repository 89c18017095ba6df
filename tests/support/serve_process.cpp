#include "support/serve_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "base/unix_socket.h"
#include "support/hprof_builder.h"
#include "support/isolated_jvm.h"
#include "support/jvm_process.h"

namespace heapd::test {

bool start_analysis(raw_client& c, const std::string& path, bool wait, std::uint64_t id) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    bool sent = fd >= 0 && c.send_request({id, "analyze", {{"name", path}, {"wait", wait}}}, fd);
    if (fd >= 0) ::close(fd);
    return sent;
}

std::uint64_t queue_analysis(raw_client& c, const std::string& path) {
    if (!start_analysis(c, path, false)) return 0;
    auto queued = c.read_reply();
    if (!queued || queued->kind != wire::reply_kind::result) return 0;
    return queued->result["job"]["id"].get<std::uint64_t>();
}

std::vector<pid_t> analysis_processes_of(const std::string& store) {
    std::vector<pid_t> out;
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
        std::ifstream in(e.path() / "cmdline");
        std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
        if (cmdline.find("analyze-fd") != std::string::npos && cmdline.find(store + "/tmp") != std::string::npos)
            out.push_back(static_cast<pid_t>(std::stoi(e.path().filename().string())));
    }
    return out;
}

std::string heapctl_binary() { return std::string(HEAPD_BINARY_DIR) + "/cli/heapctl"; }

command_result run_heapctl(const serve_process& d, std::vector<std::string> args, const temp_user* user) {
    args.insert(args.begin(), {heapctl_binary(), "--socket", d.socket()});
    if (user != nullptr)
        args.insert(args.begin(), {"setpriv", "--reuid=" + std::to_string(user->uid()),
                                   "--regid=" + std::to_string(user->gid()), "--clear-groups"});
    return run_command(args);
}

const std::string& big_dump() {
    static shared_dir dir;
    static const std::string path = [] {
        std::string p = dir.file("big.hprof");
        if (!write_big_dump(p, 3'000'000)) throw std::runtime_error("cannot write " + p);
        return p;
    }();
    return path;
}

bool has_temp_files(const std::string& root) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(root))
        if (e.path().filename().string().starts_with(".tmp-")) return true;
    return false;
}

std::vector<std::string> small_store_launcher(const std::string& size) {
    const std::string script =
        "for a; do [ \"$prev\" = --store ] && store=$a; prev=$a; done; "
        "mkdir -p \"$store\" && mount -t tmpfs -o size=" +
        size + ",mode=0750 tmpfs \"$store\" && exec \"$@\"";
    return {"unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh"};
}

shared_dir::shared_dir() {
    std::string tmpl = "/tmp/heapd-test-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    ::chmod(tmpl.c_str(), 0755);
    path_ = tmpl;
}

shared_dir::~shared_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
}

serve_process::serve_process(std::vector<std::string> extra_args, std::vector<std::string> launcher)
    : extra_(std::move(extra_args)), launcher_(std::move(launcher)) {
    start();
}

serve_process::~serve_process() { stop(SIGTERM); }

std::vector<std::string> serve_process::args() const {
    std::vector<std::string> argv = {heapd_binary(), "serve", "--foreground", "--socket", socket(), "--store", store()};
    // A test's daemon arms only its own JVMs: those whose hook names its socket, unless the test says
    // which (--oom-arm all with its config's [[oom.select]]).
    if (std::find(extra_.begin(), extra_.end(), "--oom-arm") == extra_.end() &&
        std::find(extra_.begin(), extra_.end(), "--no-oom-arming") == extra_.end())
        argv.insert(argv.end(), {"--oom-arm", "hooked"});
    argv.insert(argv.end(), extra_.begin(), extra_.end());
    return argv;
}

bool serve_process::start() {
    if (pid_ > 0) stop(SIGTERM);
    ready_ = false;
    const std::string log_file = dir_.file("heapd.log");
    auto argv = launcher_;
    for (const std::string& a : args()) argv.push_back(a);
    pid_ = ::fork();
    if (pid_ == 0) {
        int log = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        int null = ::open("/dev/null", O_RDWR);
        ::dup2(null, 0);
        ::dup2(null, 1);
        ::dup2(log, 2);
        std::vector<char*> a;
        for (auto& s : argv) a.push_back(s.data());
        a.push_back(nullptr);
        ::execvp(a[0], a.data());
        ::_exit(127);
    }
    for (int i = 0; i < 300 && pid_ > 0; ++i) {
        if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
            pid_ = -1;
            return false;
        }
        raw_client c(socket());
        if (c.connected() && c.send_request({1, "status", wire::json::object()})) {
            auto r = c.read_reply(std::chrono::seconds(10));
            if (r && r->kind == wire::reply_kind::result) {
                ready_ = true;
                return true;
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
}

int serve_process::stop(int sig) {
    if (pid_ <= 0) return -1;
    ::kill(pid_, sig);
    int status = 0;
    for (int i = 0; i < 300; ++i) {
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return -1;
}

std::string serve_process::log() const {
    std::ifstream in(dir_.file("heapd.log"));
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

raw_client::raw_client(const std::string& socket_path) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    socket_path.copy(addr.sun_path, sizeof addr.sun_path - 1);
    if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0)
        fd_ = fd;
    else if (fd >= 0)
        ::close(fd);
}

raw_client::~raw_client() { close(); }

void raw_client::close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

bool raw_client::send_bytes(std::string_view bytes, int pass_fd) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
        const ssize_t n = send_with_fd(fd_, bytes.data() + sent, bytes.size() - sent, sent == 0 ? pass_fd : -1);
        if (n <= 0) return false;
        sent += static_cast<std::size_t>(n);
    }
    return true;
}

bool raw_client::send_request(const wire::request& r, int pass_fd) {
    auto frame = wire::encode_request(r);
    return frame && send_bytes(*frame, pass_fd);
}

std::optional<wire::reply> raw_client::read_reply(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        if (auto payload = parser_.next()) {
            auto reply = wire::decode_reply(*payload);
            if (reply) return *reply;
            return std::nullopt;
        }
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0 || fd_ < 0) return std::nullopt;
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
        char buf[65536];
        ssize_t n = ::read(fd_, buf, sizeof buf);
        if (n <= 0) return std::nullopt;
        if (!parser_.feed(std::string_view(buf, static_cast<std::size_t>(n)))) return std::nullopt;
    }
}

bool raw_client::closed_by_daemon(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (fd_ >= 0) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return false;
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
        char buf[4096];
        ssize_t n = ::read(fd_, buf, sizeof buf);
        if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
        if (n < 0) return false;
    }
    return false;
}

bool write_big_dump(const std::string& path, unsigned items) {
    constexpr std::uint8_t t_object = 2, t_byte = 8;
    constexpr std::uint64_t object_class = 0x100, holder_class = 0x101, item_class = 0x102, array_class = 0x103;
    constexpr std::uint64_t n_leak = 0x801, n_payload = 0x802, top_id = 0x10000000;
    const unsigned bucket = 1000, buckets = (items + bucket - 1) / bucket;
    hprof_builder b(8);
    b.utf8(0x901, "java/lang/Object").load_class(1, object_class, 0, 0x901);
    b.utf8(0x902, "Holder").load_class(2, holder_class, 0, 0x902);
    b.utf8(0x903, "Holder$Item").load_class(3, item_class, 0, 0x903);
    b.utf8(0x904, "[Ljava/lang/Object;").load_class(4, array_class, 0, 0x904);
    b.utf8(n_leak, "LEAK").utf8(n_payload, "payload");
    b.begin_segment();
    b.class_dump(object_class, 0, {});
    b.class_dump(holder_class, object_class, {}, {{n_leak, t_object, values(8).id(top_id)}});
    b.class_dump(item_class, object_class, {{n_payload, t_object}});
    b.class_dump(array_class, object_class, {});
    b.root_sticky_class(holder_class);
    std::vector<std::uint64_t> ids;
    for (unsigned k = 0; k < buckets; ++k) ids.push_back(top_id + 0x10 + k * 0x10);
    b.object_array(top_id, array_class, std::span<const std::uint64_t>(ids));
    std::vector<std::uint64_t> members;
    std::uint64_t next = 0x20000000;
    for (unsigned k = 0; k < buckets; ++k) {
        members.clear();
        for (unsigned i = 0; i < bucket && k * bucket + i < items; ++i) {
            const std::uint64_t item = next, payload = next + 0x10;
            next += 0x40;
            members.push_back(item);
            b.instance(item, item_class, values(8).id(payload).bytes());
            b.primitive_array(payload, t_byte, 16);
        }
        b.object_array(ids[k], array_class, std::span<const std::uint64_t>(members));
    }
    b.end_segment();
    b.heap_dump_end();
    return b.write_to(path);
}

}  // namespace heapd::test
