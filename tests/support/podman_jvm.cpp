#include "support/podman_jvm.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

namespace heapd::test {
namespace {

bool on_path(const std::string& tool) { return run_command({"sh", "-c", "command -v " + tool}).exit_code == 0; }

}  // namespace

bool podman_jvm::available() { return on_path("podman") && on_path("runc"); }

podman_jvm::podman_jvm(const container_spec& spec, const java_main& main_class,
                       const std::vector<std::string>& jvm_flags, const std::vector<std::string>& args,
                       const std::string& out_file)
    : name_(spec.name) {
    (void)run_command({"podman", "rm", "-f", "--time", "0", name_});  // left by an earlier run
    std::vector<std::string> argv = {"podman",
                                     "--runtime",
                                     "runc",
                                     "run",
                                     "--rm",
                                     "--name",
                                     name_,
                                     "--hostname",
                                     name_,
                                     "--memory",
                                     spec.memory,
                                     "--ulimit",
                                     "nofile=20000:20000",
                                     "--ulimit",
                                     "nproc=20000:20000",
                                     "--tmpfs",
                                     "/tmp:rw,notmpcopyup"};
    for (const std::string& dir : spec.shared) argv.insert(argv.end(), {"-v", dir + ":" + dir});
    argv.insert(argv.end(), {"--rootfs", "/:O", main_class.jdk_bin + "java"});
    argv.insert(argv.end(), jvm_flags.begin(), jvm_flags.end());
    argv.insert(argv.end(), {"-cp", test_classes_dir(), main_class.name});
    argv.insert(argv.end(), args.begin(), args.end());
    podman_ = ::fork();
    if (podman_ == 0) {
        ::setsid();  // a test that stops JVMs signals no group of ours
        const int out = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        ::dup2(null, 0);
        ::dup2(out, 1);
        ::dup2(out, 2);
        std::vector<char*> a;
        for (std::string& s : argv) a.push_back(s.data());
        a.push_back(nullptr);
        ::execvp(a[0], a.data());
        ::_exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
        std::ifstream in(out_file);
        const std::string text((std::istreambuf_iterator<char>(in)), {});
        if (text.find("ready") != std::string::npos) {
            auto inspect = run_command({"podman", "inspect", "--format", "{{.State.Pid}}", name_});
            if (inspect.exit_code == 0) pid_ = static_cast<pid_t>(std::stol("0" + inspect.out));
            if (pid_ <= 0) pid_ = -1;
            return;
        }
        if (::waitpid(podman_, nullptr, WNOHANG) == podman_) {
            podman_ = -1;
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

bool podman_jvm::exists() const { return run_command({"podman", "container", "exists", name_}).exit_code == 0; }

podman_jvm::~podman_jvm() {
    (void)run_command({"podman", "rm", "-f", "--time", "0", name_});
    if (podman_ > 0) {
        for (int i = 0; i < 300 && ::waitpid(podman_, nullptr, WNOHANG) != podman_; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        ::kill(podman_, SIGKILL);
        ::waitpid(podman_, nullptr, 0);
    }
}

}  // namespace heapd::test
