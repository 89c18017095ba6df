#pragma once
// The config file (/etc/heapd/heapd.toml, TOML) read into a heapd_config, every error found reported
// with its place: FILE:LINE:COLUMN: message. Layout (every key optional):
//   [daemon]     socket, store, spool, group, workers, poll_interval, max_connections,
//                max_connections_per_user, idle_timeout, shutdown_grace
//   [retention]  keep_count, keep_bytes, keep_days
//   [metrics]    textfile, interval
//   [[rule]]     name, main_class, command, user, container, every, old_gen_percent,
//                old_gen_collections, gc_time_percent, gc_window, predict_full_within,
//                predict_window, cooldown, max_dumps, live
// systemd/heapd.toml is the commented default. Nothing here prints or logs.
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/config/config.h"

namespace heapd::daemon {

// One thing wrong with a config file and where: line and column from 1, or 0 for the whole file.
struct config_error {
    std::string file;
    int line = 0;
    int column = 0;
    std::string message;

    // "FILE:LINE:COLUMN: message", or "FILE: message" for the whole file.
    std::string describe() const;
};

// A configuration, or every error found in its file, in the order of the file.
using config_result = std::expected<heapd_config, std::vector<config_error>>;

// The config file heapd reads when told none: /etc/heapd/heapd.toml (the install's sysconfdir).
std::string default_config_path();

// The TOML text of a config file (file: its name in errors) over base, which holds the values of
// the keys it leaves out.
config_result parse_config(std::string_view text, const std::string& file, const heapd_config& base = {});

// The config file at path (at most 1 MiB) over base.
config_result read_config_file(const std::string& path, const heapd_config& base = {});

// What `heapd serve` was told on its command line: each value given overrides the file's.
struct config_overrides {
    std::optional<std::string> socket_path, store_dir, spool_dir, group;
    std::optional<unsigned> workers;
    std::optional<std::uint64_t> keep_count, keep_bytes, keep_days;
    std::optional<std::string> metrics_file;
    std::optional<std::chrono::seconds> metrics_interval;
    std::optional<arm_mode> oom_arm;
    bool foreground = false;
};

// config with the overrides given put in.
void apply_overrides(heapd_config& config, const config_overrides& overrides);

// The daemon's configuration: the file at path over base, then the overrides. When the file does
// not exist and !must_exist, base with the overrides; path "" reads no file.
config_result load_config(const std::string& path, bool must_exist, const heapd_config& base,
                          const config_overrides& overrides);

}  // namespace heapd::daemon
