#pragma once
// The heapd subcommands: each registers its options on the CLI and runs when chosen.
#include <CLI/CLI.hpp>

#include "formats/wire/exit_codes.h"

namespace heapd::daemon {

using namespace heapd::wire::exits;  // heapd's exit statuses

// `heapd analyze FILE [--json] [--top N]`: summary, histogram, largest objects, threads.
void add_analyze(CLI::App& app, int& status);
// `heapd strip IN OUT [--keep-strings]`: a copy without primitive array contents.
void add_strip(CLI::App& app, int& status);
// `heapd diff OLD NEW [--json] [--top N]`: per class, the change between two dumps of one JVM.
void add_diff(CLI::App& app, int& status);

// `heapd serve [--config FILE] [--socket PATH] [--store DIR] [--workers N] [--foreground]`: the daemon.
void add_serve(CLI::App& app, int& status);
// `heapd analyze-fd --name NAME --inflate-dir DIR --parent PID ...`: the daemon's analysis process,
// given the dump as descriptor 3 (daemon/jobs/analysis_child.h); hidden from --help.
void add_analyze_fd(CLI::App& app, int& status);

// `heapd check-config [FILE]`: validates the config file (errors as FILE:LINE:COLUMN: message, exit
// 2) or prints a summary of what it sets.
void add_check_config(CLI::App& app, int& status);

// `heapd dump PID [--socket PATH] [--spool DIR]`: the OnOutOfMemoryError hook; hands the dump to
// the daemon (or spools it) and returns at once, writing nothing.
void add_dump(CLI::App& app, int& status);

// `heapd path FILE OBJECT_ID [--roots N] [--json]`: shortest strong paths from GC roots.
void add_path(CLI::App& app, int& status);

// `heapd jvms [--json]`: the JVMs of the host and its containers, found without attaching.
void add_jvms(CLI::App& app, int& status);

// `heapd memory PID [--json] [--no-attach] [--timeout S]`: where the JVM's memory goes against its limit.
void add_memory(CLI::App& app, int& status);

// `heapd attach PID COMMAND [ARGS...] [--timeout S]`: one attach operation on a running JVM.
void add_attach(CLI::App& app, int& status);

// `heapd stack PID [--native] [--timeout S] [--json]`: the JVM's thread dump, else native stacks.
void add_stack(CLI::App& app, int& status);

// `heapd sites PID [--seconds N | --start | --show | --stop | --status] [--interval BYTES] [--depth N]
// [--by site|method|class] [--order live|allocated] [--cutoff R] [--json]`: allocation sites sampled
// by heapd's agent in the JVM.
void add_sites(CLI::App& app, int& status);
// `heapd cpu PID [--seconds N | --start | --show | --stop] [--period MS] [--depth N] [--top N] [--json]`:
// stacks of the threads running Java code, sampled by heapd's agent (hprof's cpu=samples).
void add_cpu(CLI::App& app, int& status);

// `heapd upload [--config FILE] [--once] [--store DIR]`: the store's reports to an S3 bucket.
void add_upload(CLI::App& app, int& status);

// `heapd fleet [--config FILE | --dir DIR] [--since WHEN] [--service NAME] [--json] [--html OUT]`: the
// reports in the bucket by service and host, their leak suspects grouped into findings.
void add_fleet(CLI::App& app, int& status);

}  // namespace heapd::daemon
