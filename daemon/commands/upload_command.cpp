// `heapd upload [--config FILE] [--once]`: sends every report heapd keeps to the bucket the
// config's [upload] names (daemon/upload/uploader.h); as heapd-upload.service, or once from cron.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "base/atomic_file.h"
#include "daemon/commands/commands.h"
#include "daemon/config/config_file.h"
#include "daemon/runtime/daemon_log.h"
#include "daemon/upload/uploader.h"

namespace heapd::daemon {
namespace {

std::atomic<bool> stop_requested{false};

extern "C" void on_stop_signal(int) { stop_requested = true; }

// The options of one upload invocation.
struct upload_args {
    std::string config;
    bool config_given = false;
    bool once = false;
    std::string store;
};

int run_upload(const upload_args& a) {
    const std::string path = a.config_given ? a.config : daemon::default_config_path();
    auto config = daemon::read_config_file(path, daemon::heapd_config{});
    if (!config) {
        for (const daemon::config_error& e : config.error()) std::fprintf(stderr, "%s\n", e.describe().c_str());
        return bad_input;
    }
    const daemon::upload_options& o = config->upload;
    if (o.endpoint.empty()) {
        std::fprintf(stderr, "heapd upload: %s has no [upload] endpoint: nothing to upload to\n", path.c_str());
        return usage;
    }
    const std::string credentials_file = daemon::credentials_file_of(o);
    if (credentials_file.empty()) {
        std::fprintf(stderr, "heapd upload: %s names no upload.credentials_file (and systemd passed none)\n",
                     path.c_str());
        return usage;
    }
    auto credentials = daemon::read_credentials(credentials_file);
    if (!credentials) {
        std::fprintf(stderr, "heapd upload: %s\n", credentials.error().describe().c_str());
        return bad_input;
    }
    auto state = daemon::upload_state::open(o.state_dir);
    if (!state) {
        std::fprintf(stderr, "heapd upload: %s\n", state.error().describe().c_str());
        return bad_input;
    }
    auto client = std::make_unique<daemon::s3_client>(
        daemon::s3_target{o.endpoint, o.bucket, o.region, credentials->first, credentials->second});
    client->set_cancel(&stop_requested);
    auto log = daemon::make_logger(true);
    const std::string store = a.store.empty() ? config->serve.store_dir : a.store;
    daemon::uploader up(o, store, std::move(*state), std::move(client), log);
    up.set_ignore_backoff(a.once);

    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    ::sigaction(SIGTERM, &sa, nullptr);
    ::sigaction(SIGINT, &sa, nullptr);
    ::signal(SIGPIPE, SIG_IGN);
    if (!a.once)
        log->info("uploading the reports of {} to {}/{}/{} every {} s", store, o.endpoint, o.bucket, o.prefix,
                  o.interval.count());
    for (;;) {
        const std::size_t waiting = up.run_pass(stop_requested);
        if (!o.metrics_textfile.empty())
            if (auto w = write_file_atomic(o.metrics_textfile, up.metrics_text(), file_access{0644, 0755, 0, false});
                !w)
                log->warn("cannot write {}: {}", o.metrics_textfile, w.error().describe());
        if (a.once) {
            log->flush();
            return waiting == 0 ? ok : failed;
        }
        const auto until = std::chrono::steady_clock::now() + o.interval;
        while (!stop_requested && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        if (stop_requested) break;
    }
    log->info("stopped");
    return ok;
}

}  // namespace

void add_upload(CLI::App& app, int& status) {
    auto args = std::make_shared<upload_args>();
    CLI::App* sub = app.add_subcommand(
        "upload",
        "Send every report heapd keeps (and, if asked, its dump stripped and compressed) to the S3 bucket "
        "of the config's [upload]");
    sub->add_option("--config", args->config, "Config file (default: " + daemon::default_config_path() + ")")
        ->each([args](const std::string&) { args->config_given = true; });
    sub->add_flag("--once", args->once,
                  "One pass over the store, retrying failed uploads now, then exit: 0 when everything is in the "
                  "bucket, 6 when something is still waiting");
    sub->add_option("--store", args->store, "The store to read (default: the config's daemon.store)");
    sub->callback([args, &status] { status = run_upload(*args); });
}

}  // namespace heapd::daemon
