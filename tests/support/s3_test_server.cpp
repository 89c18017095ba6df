#include "support/s3_test_server.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/jvm_process.h"

namespace heapd::test {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view object_suffix = "._S3rver_object";

// A loopback port nobody listens on now.
int free_port() {
    int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = 0;
    if (::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) == 0)
        port = ntohs(a.sin_port);
    ::close(s);
    return port;
}

std::string read_whole(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

std::string s3_test_server::s3rver_module() {
    const std::string module = std::string(HEAPD_BINARY_DIR) + "/npm/node_modules/s3rver";
    return fs::exists(module + "/package.json") ? module : "";
}

s3_test_server::s3_test_server(std::string dir, std::string bucket, std::string secret)
    : dir_(std::move(dir)), bucket_(std::move(bucket)), secret_(std::move(secret)), port_(free_port()) {
    fs::create_directories(dir_ + "/data");
}

s3_test_server::~s3_test_server() { kill(); }

bool s3_test_server::start() {
    kill();
    const std::string script = std::string(HEAPD_SOURCE_DIR) + "/tests/support/s3_test_server.js";
    const std::string log = dir_ + "/server.log";
    pid_ = ::fork();
    if (pid_ == 0) {
        int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (fd >= 0) ::dup2(fd, STDERR_FILENO);
        int out = ::open((dir_ + "/server.out").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (out >= 0) ::dup2(out, STDOUT_FILENO);
        // s3rver makes ListObjectsV2's continuation tokens with DES, which OpenSSL 3 keeps in its
        // legacy provider: without it every listing longer than a page fails (InternalError).
        ::execlp("node", "node", "--openssl-legacy-provider", script.c_str(), s3rver_module().c_str(),
                 (dir_ + "/data").c_str(), bucket_.c_str(), std::to_string(port_).c_str(), secret_.c_str(),
                 static_cast<char*>(nullptr));
        ::_exit(127);
    }
    for (int i = 0; i < 300; ++i) {
        if (read_whole(dir_ + "/server.out").find("ready") != std::string::npos) return true;
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
}

void s3_test_server::kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
}

std::vector<std::string> s3_test_server::keys() const {
    std::vector<std::string> keys;
    const fs::path root = dir_ + "/data/" + bucket_;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
        const std::string rel = fs::relative(it->path(), root).string();
        if (rel.starts_with("._S3rver_uploads")) continue;
        if (rel.ends_with(object_suffix)) keys.push_back(rel.substr(0, rel.size() - object_suffix.size()));
    }
    std::sort(keys.begin(), keys.end());
    return keys;
}

std::optional<std::string> s3_test_server::object(const std::string& key) const {
    const fs::path p = dir_ + "/data/" + bucket_ + "/" + key + std::string(object_suffix);
    if (!fs::exists(p)) return std::nullopt;
    return read_whole(p);
}

std::size_t s3_test_server::open_uploads() const {
    std::size_t n = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir_ + "/data/" + bucket_ + "/._S3rver_uploads", ec)) {
        (void)e;
        ++n;
    }
    return n;
}

std::string s3_test_server::refusals() const { return read_whole(dir_ + "/server.log"); }

}  // namespace heapd::test
