// heapd: serviceability for HotSpot JVMs. For now the offline commands over heap dumps.
#include <cstdio>

#include "daemon/commands/commands.h"

int main(int argc, char** argv) {
    CLI::App app{"heapd: heap dumps of HotSpot JVMs, taken and analyzed on the host", "heapd"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "heapd 0.1.0");
    int status = heapd::daemon::ok;
    heapd::daemon::add_analyze(app, status);
    heapd::daemon::add_strip(app, status);
    heapd::daemon::add_path(app, status);
    heapd::daemon::add_diff(app, status);
    heapd::daemon::add_jvms(app, status);
    heapd::daemon::add_attach(app, status);
    heapd::daemon::add_stack(app, status);
    heapd::daemon::add_memory(app, status);
    heapd::daemon::add_sites(app, status);
    heapd::daemon::add_cpu(app, status);
    heapd::daemon::add_serve(app, status);
    heapd::daemon::add_analyze_fd(app, status);
    heapd::daemon::add_dump(app, status);
    heapd::daemon::add_check_config(app, status);
    heapd::daemon::add_upload(app, status);
    heapd::daemon::add_fleet(app, status);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int rc = app.exit(e);
        return rc == 0 ? heapd::daemon::ok : heapd::daemon::usage;
    }
    return status;
}
