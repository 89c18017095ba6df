// heapd: serviceability for HotSpot JVMs. For now the offline commands over heap dumps.
#include <cstdio>

#include "daemon/commands/commands.h"

int main(int argc, char** argv) {
    CLI::App app{"heapd: heap dumps of HotSpot JVMs, taken and analyzed on the host", "heapd"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "heapd 0.1.0");
    int status = heapd::cmd::ok;
    heapd::cmd::add_analyze(app, status);
    heapd::cmd::add_strip(app, status);
    heapd::cmd::add_path(app, status);
    heapd::cmd::add_diff(app, status);
    heapd::cmd::add_jvms(app, status);
    heapd::cmd::add_attach(app, status);
    heapd::cmd::add_stack(app, status);
    heapd::cmd::add_sites(app, status);
    heapd::cmd::add_cpu(app, status);
    heapd::cmd::add_serve(app, status);
    heapd::cmd::add_analyze_fd(app, status);
    heapd::cmd::add_dump(app, status);
    heapd::cmd::add_check_config(app, status);
    heapd::cmd::add_upload(app, status);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int rc = app.exit(e);
        return rc == 0 ? heapd::cmd::ok : heapd::cmd::usage;
    }
    return status;
}
