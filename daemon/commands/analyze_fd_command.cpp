// `heapd analyze-fd`: the daemon's analysis process (daemon/jobs/analysis_child.h), one per job;
// not for people, so hidden from --help.
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "daemon/commands/commands.h"
#include "daemon/jobs/analysis_child.h"
#include "daemon/runtime/crash_handler.h"

namespace heapd::daemon {
namespace {

// The options the daemon passes (daemon/jobs/analysis_child.cpp builds them).
struct child_args {
    std::string name, inflate_dir;
    pid_t parent = 0;
    std::optional<std::uint64_t> object;
    unsigned roots = 1;
    std::optional<std::uint64_t> max_inflated;
    std::uint64_t memory = 0;
    disk_reserve reserve;
};

}  // namespace

void add_analyze_fd(CLI::App& app, int& status) {
    auto c = std::make_shared<child_args>();
    CLI::App* child = app.add_subcommand("analyze-fd", "");
    child->group("");
    child->add_option("--name", c->name)->required();
    child->add_option("--inflate-dir", c->inflate_dir)->required();
    child->add_option("--parent", c->parent)->required();
    child->add_option("--object", c->object);
    child->add_option("--roots", c->roots)->check(CLI::Range(1u, 1000u));
    child->add_option("--max-inflated", c->max_inflated);
    child->add_option("--memory", c->memory);
    child->add_option("--disk-reserve", c->reserve.floor);
    child->add_option("--disk-reserve-percent", c->reserve.percent)->check(CLI::Range(0u, 100u));
    child->callback([c, &status] {
        daemon::install_crash_handler();
        status = daemon::analyze_fd_main(c->name, c->inflate_dir, c->parent, c->object, c->roots, c->max_inflated,
                                         c->memory, c->reserve);
    });
}

}  // namespace heapd::daemon
