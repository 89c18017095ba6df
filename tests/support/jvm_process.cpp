#include "support/jvm_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace heapd::test {
namespace {

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
    std::vector<char*> out;
    for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
    out.push_back(nullptr);
    return out;
}

// Reads both pipes until they close.
void drain(int out_fd, int err_fd, std::string& out, std::string& err) {
    pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
    int open_fds = 2;
    char buf[65536];
    while (open_fds > 0) {
        if (::poll(fds, 2, -1) < 0) break;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
            if (n > 0) {
                (i == 0 ? out : err).append(buf, static_cast<std::size_t>(n));
            } else {
                ::close(fds[i].fd);
                fds[i].fd = -1;
                --open_fds;
            }
        }
    }
}

}  // namespace

std::string visualvm_heap_jar() {
    return "/usr/share/visualvm/visualvm/modules/org-graalvm-visualvm-lib-jfluid-heap.jar";
}

bool leaky_grow(const std::string& trigger) {
    { std::ofstream(trigger) << "grow\n"; }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (std::filesystem::exists(trigger)) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
}

std::map<std::string, double> jstat_columns(const std::string& text, double dash) {
    std::istringstream in(text);
    std::string header, values;
    std::getline(in, header);
    std::getline(in, values);
    std::istringstream h(header), v(values);
    std::map<std::string, double> out;
    std::string name, val;
    while (h >> name && v >> val) out[name] = val == "-" ? dash : std::stod(val);
    return out;
}

std::map<std::string, double> jstat_gc(pid_t pid) {
    auto r = run_command({"jstat", "-gc", std::to_string(pid)});
    return r.exit_code == 0 ? jstat_columns(r.out, 0) : std::map<std::string, double>{};
}

std::string test_classes_dir() {
    // Test processes run in parallel: each compiles into its own directory unless the sources'
    // directory (named by their names, sizes and times) is there already, then renames it into place;
    // the first rename wins and the others use its classes.
    static std::once_flag once;
    static std::string dir;
    std::call_once(once, [] {
        std::vector<std::string> sources;
        std::uint64_t h = 0xcbf29ce484222325ULL;
        auto mix = [&h](const std::string& text) {
            for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
        };
        for (const auto& e : std::filesystem::directory_iterator(std::string(HEAPD_SOURCE_DIR) + "/tests/java"))
            if (e.path().extension() == ".java") sources.push_back(e.path().string());
        std::sort(sources.begin(), sources.end());
        for (const auto& src : sources)
            mix(src + ":" + std::to_string(std::filesystem::file_size(src)) + ":" +
                std::to_string(std::filesystem::last_write_time(src).time_since_epoch().count()));
        char name[32];
        std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(h));
        const std::string base = std::string(HEAPD_BINARY_DIR) + "/tests";
        dir = base + "/java-classes-" + name;
        if (std::filesystem::exists(dir)) return;
        std::filesystem::create_directories(base);
        std::string tmp = base + "/java-classes-tmp-XXXXXX";
        if (::mkdtemp(tmp.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
        // Every program in tests/java; those that use VisualVM's heap library need it on the classpath.
        std::vector<std::string> argv = {"javac", "-encoding", "UTF-8", "-d", tmp, "-cp", visualvm_heap_jar()};
        argv.insert(argv.end(), sources.begin(), sources.end());
        auto r = run_command(argv);
        if (r.exit_code != 0) {
            std::filesystem::remove_all(tmp);
            throw std::runtime_error("javac failed: " + r.err);
        }
        ::chmod(tmp.c_str(), 0755);  // other users' test JVMs read it
        if (::rename(tmp.c_str(), dir.c_str()) != 0) std::filesystem::remove_all(tmp);  // another process won
    });
    return dir;
}

started_process start_until_ready(const std::vector<std::string>& argv, const std::string& workdir,
                                  const std::string& stdout_file) {
    started_process p;
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return p;
    int file = -1;
    if (!stdout_file.empty() &&
        (file = ::open(stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
        return p;
    p.pid = ::fork();
    if (p.pid == 0) {
        ::dup2(file >= 0 ? file : out[1], 1);
        if (!workdir.empty() && ::chdir(workdir.c_str()) != 0) ::_exit(126);
        auto a = c_argv(argv);
        ::execvp(a[0], a.data());
        ::_exit(127);
    }
    ::close(out[1]);
    if (file >= 0) ::close(file);
    std::string seen;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    char buf[4096];
    while (seen.find("ready") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
        if (!stdout_file.empty()) {
            std::ifstream in(stdout_file);
            seen.assign(std::istreambuf_iterator<char>(in), {});
            if (seen.find("ready") == std::string::npos) std::this_thread::sleep_for(std::chrono::milliseconds(50));
            continue;
        }
        pollfd pfd{out[0], POLLIN, 0};
        if (::poll(&pfd, 1, 1000) <= 0) continue;
        ssize_t n = ::read(out[0], buf, sizeof buf);
        if (n <= 0) break;
        seen.append(buf, static_cast<std::size_t>(n));
    }
    ::close(out[0]);
    p.ready = p.pid > 0 && seen.find("ready") != std::string::npos;
    return p;
}

command_result run_command(const std::vector<std::string>& argv) {
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) return {};
    pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(out[1], 1);
        ::dup2(err[1], 2);
        int devnull = ::open("/dev/null", O_RDONLY);
        ::dup2(devnull, 0);
        auto args = c_argv(argv);
        ::execvp(args[0], args.data());
        ::_exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    command_result r;
    drain(out[0], err[0], r.out, r.err);
    int status = 0;
    ::waitpid(pid, &status, 0);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return r;
}

std::string jdk25_bin() {
    const std::string bin = "/usr/lib/jvm/temurin-25-jdk-amd64/bin/";
    return ::access((bin + "java").c_str(), X_OK) == 0 ? bin : "";
}

std::string heapd_binary() { return std::string(HEAPD_BINARY_DIR) + "/daemon/heapd"; }

demo_jvm::demo_jvm(const std::vector<std::string>& jvm_flags, const std::vector<std::string>& args)
    : demo_jvm(java_main{"Demo"}, jvm_flags, args) {}

demo_jvm::demo_jvm(const java_main& main_class, const std::vector<std::string>& jvm_flags,
                   const std::vector<std::string>& args, const std::string& stdout_file)
    : jdk_bin_(main_class.jdk_bin) {
    std::vector<std::string> argv = {jdk_bin_ + "java"};
    argv.insert(argv.end(), jvm_flags.begin(), jvm_flags.end());
    argv.insert(argv.end(), {"-cp", test_classes_dir(), main_class.name});
    argv.insert(argv.end(), args.begin(), args.end());
    auto started = start_until_ready(argv, {}, stdout_file);
    pid_ = started.pid;
    ready_ = started.ready;
}

demo_jvm::~demo_jvm() {
    if (pid_ <= 0) return;
    // SIGTERM lets the JVM remove its hsperfdata file; SIGKILL if it does not go within 10 s.
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 100; ++i) {
        if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return;
        ::usleep(100000);
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
}

command_result demo_jvm::jcmd(const std::vector<std::string>& args) const {
    // Its output in UTF-8 whatever the locale (JDK 17 writes in the locale's charset: "?" for "é" under C).
    std::vector<std::string> argv = {jdk_bin_ + "jcmd", "-J-Dfile.encoding=UTF-8", std::to_string(pid_)};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv);
}

scratch_dir::scratch_dir() {
    std::string base = std::string(HEAPD_BINARY_DIR) + "/tests/scratch";
    std::filesystem::create_directories(base);
    std::string tmpl = base + "/t-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
}

scratch_dir::~scratch_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
}

}  // namespace heapd::test
