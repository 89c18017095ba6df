// `heapd check-config [FILE]`: validates the config file; each error as FILE:LINE:COLUMN: message.
#include <cstdio>
#include <memory>
#include <string>

#include "daemon/commands/commands.h"
#include "daemon/config/config_file.h"
#include "daemon/config/config_text.h"
#include "daemon/oom/spool.h"

namespace heapd::daemon {

void add_check_config(CLI::App& app, int& status) {
    auto file = std::make_shared<std::string>();
    CLI::App* sub = app.add_subcommand(
        "check-config", "Check a config file: its errors with line and column, or a summary of what it sets");
    sub->add_option("FILE", *file, "Config file (default: " + daemon::default_config_path() + ")");
    sub->callback([file, &status] {
        const std::string path = file->empty() ? daemon::default_config_path() : *file;
        daemon::heapd_config base;
        base.serve.spool_dir = daemon::default_spool_dir();  // as `heapd serve` would
        auto config = daemon::read_config_file(path, base);
        if (!config) {
            for (const daemon::config_error& e : config.error()) std::fprintf(stderr, "%s\n", e.describe().c_str());
            status = bad_input;
            return;
        }
        std::printf("%s: valid\n", path.c_str());
        for (const std::string& line : daemon::config_summary(*config)) std::printf("  %s\n", line.c_str());
        status = ok;
    });
}

}  // namespace heapd::daemon
