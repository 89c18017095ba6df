// `heapd serve`: runs the daemon, in the foreground or detached once it is ready to serve.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "base/fd_io.h"
#include "base/unique_fd.h"
#include "daemon/commands/commands.h"
#include "daemon/config/config_file.h"
#include "daemon/config/config_values.h"
#include "daemon/oom/spool.h"
#include "daemon/runtime/crash_handler.h"
#include "daemon/runtime/daemon_log.h"
#include "daemon/server/server.h"

namespace heapd::daemon {
namespace {

// The pipe a detached daemon tells its parent through that it serves (one byte '\0') or why it
// cannot (a message).
struct ready_pipe {
    heapd::unique_fd read, write;
};

void tell_parent(ready_pipe& p, const std::string& message) {
    if (!p.write) return;
    std::string m = message.empty() ? std::string(1, '\0') : message;
    // A parent that is gone reads nothing either way: a failed write changes nothing.
    write_all(p.write.get(), m);
    p.write.reset();
}

// Forks: the parent waits until the daemon serves (exit 0) or fails (exit cannot_serve); the daemon,
// a grandchild, leaves the terminal and returns.
void detach(ready_pipe& p) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;
    p.read.reset(fds[0]);
    p.write.reset(fds[1]);
    pid_t pid = ::fork();
    if (pid < 0) {
        std::perror("heapd: fork");
        std::exit(cannot_serve);
    }
    if (pid > 0) {
        p.write.reset();
        std::string message;
        char buf[512];
        for (ssize_t n; (n = ::read(p.read.get(), buf, sizeof buf)) > 0;)
            message.append(buf, static_cast<std::size_t>(n));
        if (message.size() == 1 && message[0] == '\0') std::exit(ok);
        std::fprintf(stderr, "heapd: %s\n", message.empty() ? "the daemon died while starting" : message.c_str());
        std::exit(cannot_serve);
    }
    p.read.reset();
    // A new session without a terminal, and then a second fork: the process that serves is not the
    // session's leader, so no terminal it ever opens can become its controlling terminal.
    ::setsid();
    if (pid_t again = ::fork(); again != 0) ::_exit(again < 0 ? cannot_serve : ok);
    if (::chdir("/") != 0) {}
    int null = ::open("/dev/null", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (null >= 0) {
        ::dup2(null, 0);
        ::dup2(null, 1);
        ::dup2(null, 2);
        if (null > 2) ::close(null);
    }
}

// Never inlined: crash reports name it (tests/e2e/crash_handler_test.cpp).
[[gnu::noinline]] int run_serve(const daemon::heapd_config& config, const std::string& config_path,
                                daemon::server::config_loader reload) {
    const daemon::serve_options& o = config.serve;
    ::umask(027);
    ::signal(SIGPIPE, SIG_IGN);
    daemon::install_crash_handler();
    if (const char* how = std::getenv("HEAPD_TEST_CRASH"); how != nullptr && *how != '\0') daemon::crash_for_test(how);
    ready_pipe ready;
    if (!o.foreground) detach(ready);
    auto log = daemon::make_logger(o.foreground);
    log->info("configuration: {}", config_path.empty() ? "none, the defaults and the command line" : config_path);
    auto srv = daemon::server::open(config, log, std::move(reload));
    if (!srv) {
        log->error("cannot serve: {}", srv.error().message);
        tell_parent(ready, srv.error().message);
        return cannot_serve;
    }
    if (!o.foreground) {
        // A detached daemon's stderr goes nowhere: crash reports go to the store as well.
        const std::string crash_log = o.store_dir + "/crash.log";
        int fd = ::open(crash_log.c_str(), O_WRONLY | O_NOCTTY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
        daemon::install_crash_handler(fd);
    }
    tell_parent(ready, "");
    if (!(*srv)->run()) {
        log->flush();
        std::_Exit(ok);  // workers still run and use the server: end without destructors
    }
    return ok;
}

// The options of `heapd serve` that override the config file, when given.
daemon::config_overrides given_overrides(const CLI::App& sub, const daemon::serve_options& o,
                                         const daemon::metrics_options& metrics, unsigned interval,
                                         const std::string& oom_arm) {
    daemon::config_overrides v;
    auto given = [&](const char* name) { return sub.get_option(name)->count() > 0; };
    if (given("--socket")) v.socket_path = o.socket_path;
    if (given("--store")) v.store_dir = o.store_dir;
    if (given("--spool")) v.spool_dir = o.spool_dir;
    if (given("--group")) v.group = o.group;
    if (given("--workers")) v.workers = o.workers;
    if (given("--keep-count")) v.keep_count = o.retention.max_count;
    if (given("--keep-bytes")) v.keep_bytes = o.retention.max_bytes;
    if (given("--keep-days")) v.keep_days = o.retention.max_age_days;
    if (given("--metrics-file")) {
        std::error_code ec;  // the daemon detaches into /: a relative path is made absolute here
        auto absolute = std::filesystem::absolute(metrics.textfile, ec);
        v.metrics_file = ec || metrics.textfile.empty() ? metrics.textfile : absolute.string();
    }
    if (given("--metrics-interval")) v.metrics_interval = std::chrono::seconds(interval);
    if (given("--oom-arm")) v.oom_arm = daemon::arm_mode_named(oom_arm);
    if (given("--no-oom-arming")) v.oom_arm = daemon::arm_mode::none;
    v.foreground = o.foreground;
    return v;
}

}  // namespace

void add_serve(CLI::App& app, int& status) {
    auto o = std::make_shared<daemon::serve_options>();
    auto config_file = std::make_shared<std::string>();
    CLI::App* sub = app.add_subcommand("serve", "Run the heapd daemon: analyses served to heapctl over a Unix socket");
    sub->add_option("--config", *config_file,
                    "Config file; options given here override it (default: " + daemon::default_config_path() +
                        " when it exists; \"\" for none)");
    sub->add_option("--socket", o->socket_path, "Unix socket to listen on")->capture_default_str();
    sub->add_option("--store", o->store_dir, "Directory of dumps, reports and job records")->capture_default_str();
    sub->add_option("--spool", o->spool_dir,
                    "Directory of dump requests spooled by `heapd dump` while no daemon ran "
                    "(default: $HEAPD_SPOOL, else /var/spool/heapd)");
    sub->add_option("--workers", o->workers, "Jobs doing heapd's own work (copying, analyzing) at once")
        ->check(CLI::Range(1u, 64u))
        ->capture_default_str();
    sub->add_flag("--foreground", o->foreground,
                  "Stay in the foreground and log to stderr (else detach and log to syslog)");
    sub->add_option("--group", o->group, "Group whose members may act on every dump; stored files belong to it")
        ->capture_default_str();
    sub->add_option("--keep-count", o->retention.max_count, "Dumps kept at most (0: no limit)")->capture_default_str();
    sub->add_option("--keep-bytes", o->retention.max_bytes, "Bytes the store keeps at most, e.g. 20G (0: no limit)")
        ->transform(CLI::AsSizeValue(false))
        ->capture_default_str();
    sub->add_option("--keep-days", o->retention.max_age_days, "Days a dump is kept at most (0: no limit)")
        ->capture_default_str();
    auto metrics = std::make_shared<daemon::metrics_options>();
    auto interval = std::make_shared<unsigned>(static_cast<unsigned>(metrics->interval.count()));
    sub->add_option("--metrics-file", metrics->textfile,
                    "Write Prometheus metrics to this file (node_exporter's textfile collector), atomically");
    sub->add_option("--metrics-interval", *interval, "Seconds between two writes of --metrics-file")
        ->check(CLI::Range(1u, 86400u));
    auto no_arming = std::make_shared<bool>(false);
    auto arm = std::make_shared<std::string>();
    sub->add_option("--oom-arm", *arm,
                    "Which JVMs to arm for their OutOfMemoryError: all (the config's [[oom.select]] ones when it "
                    "has any, and every hooked one), hooked (those whose OnOutOfMemoryError runs heapd), none "
                    "(the config's oom.arm)")
        ->check(CLI::IsMember({"all", "hooked", "none"}));
    sub->add_flag("--no-oom-arming", *no_arming, "Arm no JVM (--oom-arm none)");
    sub->callback([o, config_file, metrics, interval, no_arming, arm, sub, &status] {
        // The file first, then the options given; SIGHUP does the same again.
        const bool explicit_file = sub->get_option("--config")->count() > 0;
        std::string path = explicit_file ? *config_file : daemon::default_config_path();
        // A detached daemon works in /: SIGHUP must find the same file.
        std::error_code ec;
        if (auto absolute = std::filesystem::absolute(path, ec); !path.empty() && !ec) path = absolute.string();
        daemon::heapd_config base;
        base.serve.spool_dir = daemon::default_spool_dir();
        const daemon::config_overrides overrides = given_overrides(*sub, *o, *metrics, *interval, *arm);
        daemon::server::config_loader load = [=] { return daemon::load_config(path, explicit_file, base, overrides); };
        auto config = load();
        if (!config) {
            for (const daemon::config_error& e : config.error())
                std::fprintf(stderr, "heapd: %s\n", e.describe().c_str());
            status = bad_input;
            return;
        }
        struct stat st {};
        const bool read_file = !path.empty() && (explicit_file || ::stat(path.c_str(), &st) == 0);
        status = run_serve(*config, read_file ? path : std::string(), std::move(load));
    });
}

}  // namespace heapd::daemon
