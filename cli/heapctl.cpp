// heapctl: the thin client of heapd. It speaks only the protocol (formats/wire/protocol.h); files to
// analyze are opened here, with the caller's rights, and passed to the daemon as descriptors.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/safe_text.h"
#include "cli/command_line.h"
#include "cli/listings.h"
#include "cli/progress_bar.h"
#include "formats/report/history.h"
#include "formats/report/report_html.h"
#include "formats/report/report_json.h"
#include "formats/report/report_text.h"

namespace heapd::cli {
namespace {

constexpr const char* usage_text = R"(usage: heapctl [--socket PATH] COMMAND [ARGS]

Commands:
  status [--json]                      the daemon: version, store, jobs, and what you may do
  jobs [--json]                        jobs you may see, newest first
  report FILE|DUMP [--top N] [--json]  analyze FILE (opened here with your rights, passed to heapd),
                                       or show the kept report of DUMP (an id from heapctl dumps)
  report PID [--fresh]                 the report of the latest dump of the JVM PID; --fresh dumps
                                       it now and shows that report
  histo FILE|DUMP|PID [--top N]        the class histogram part of that report
  threads FILE|DUMP|PID                the threads part of that report, with their Java stacks
  jvms [--json]                        the JVMs on this host you may dump
  memory PID [--json]                  where the JVM PID's memory goes (heap, metaspace, code cache,
                                       thread stacks, files, native) against its cgroup's limit
  dump PID [--wait] [--all]            dump the JVM PID and analyze the dump; --wait waits for the
                                       report and prints it; --all keeps unreachable objects too
  dumps [--json]                       dumps and reports you may see, newest first
  deaths [--json]                      JVMs that died while heapd watched them, newest first: how
                                       (OOM kill, crash, signal, exit code), their memory as last seen
  diff PID | DUMP_A DUMP_B [--top N]   what grew: between the two latest dumps of the JVM PID, or
                                       from DUMP_A (earlier) to DUMP_B (later)
  path DUMP|PID OBJECT_ID [--roots N]  shortest strong paths from GC roots to an object of DUMP (or
                                       the latest dump of PID), from up to N different roots
  sites PID [--seconds N]              where the JVM PID allocates: heapd's agent samples its
                                       allocations (JEP 331) for N seconds (default 10), then the
                                       sites are ranked by live bytes (hprof's SITES table)
  sites PID --start|--show|--stop|--status
                                       sampling that outlives the command: start it, show the
                                       table so far, stop it and show the table, or ask
      [--interval BYTES] [--depth N]   (start) bytes between samples per thread (default 512 KiB),
                                       frames per site (default 16)
      [--by site|method|class] [--order live|allocated] [--cutoff R] [--no-gc]
                                       (table) rows per site, allocating method or class; ranked by
                                       live or allocated bytes; rows under the share R (default
                                       0.0001) left out; no full collection before counting live
  cpu PID [--seconds N] [--period MS] [--depth N]
                                       where the JVM PID spends CPU: the stacks of its threads
                                       running Java code every MS (default 10) for N seconds (10);
                                       --start, --show, --stop for a sampling that outlives it
  rm DUMP                              remove a dump and its report
  cancel JOB                           cancel a queued or running job
  metrics                              metrics of heapd and of the JVMs you may see, in the
                                       Prometheus text format

Options:
  --socket PATH  heapd's socket (default: $HEAPD_SOCKET, else /run/heapd/heapd.sock)
  --top N        rows per table of a report (default 20; 0: all)
  --wait         (dump) wait for the dump's report and print it
  --all          (dump) all objects, not only live ones (no full GC first)
  --fresh        (report PID) take a new dump now
  --roots N      (path) paths from up to N different GC roots (default 1)
  --html FILE    (report, diff) also write the report as one self-contained HTML page: the
                 suspects, the dominator tree as a picture, tables, and the JVM's earlier dumps
  --json         JSON for scripts (a report: the whole histogram unless --top is given)
  -h, --help     this help
  --version      heapctl's version and protocol

A progress bar is drawn on stderr while a report is made, when stderr is a terminal.

Exit status: 0 done; 1 usage error; 2 the file cannot be opened or is not a heap dump heapd can
read (or the dump is damaged: the report is printed all the same); 3 heapd is not running or cannot
be reached; 4 refused: the dump or job belongs to another user; 5 no such dump or job; 6 the job
failed or was cancelled, or heapd refused otherwise (no space, busy); 7 heapd speaks another
protocol version or replied nonsense.
)";

std::optional<options> parse(int argc, char** argv, int& status) {
    options o;
    std::vector<std::string> args(argv + 1, argv + argc);
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&](const std::string& flag) -> std::optional<std::string> {
            if (a.starts_with(flag + "=")) return a.substr(flag.size() + 1);
            if (i + 1 < args.size()) return args[++i];
            complain(flag + " needs a value", usage);
            return std::nullopt;
        };
        if (a == "-h" || a == "--help") {
            print(usage_text);
            status = ok;
            return std::nullopt;
        } else if (a == "--version") {
            print("heapctl 0.1.0 (protocol " + std::to_string(wire::protocol_version) + ")\n");
            status = ok;
            return std::nullopt;
        } else if (a == "--json") {
            o.json = true;
        } else if (a == "--wait") {
            o.wait = true;
        } else if (a == "--all") {
            o.all = true;
        } else if (a == "--fresh") {
            o.fresh = true;
        } else if (a == "--socket" || a.starts_with("--socket=")) {
            auto v = value("--socket");
            if (!v) return std::nullopt;
            o.socket = *v;
        } else if (a == "--html" || a.starts_with("--html=")) {
            auto v = value("--html");
            if (!v) return std::nullopt;
            if (v->empty()) {
                complain("--html needs a file name", usage);
                return std::nullopt;
            }
            o.html = *v;
        } else if (a == "--top" || a.starts_with("--top=") || a == "--roots" || a.starts_with("--roots=")) {
            const bool roots = a.starts_with("--roots");
            auto v = value(roots ? "--roots" : "--top");
            if (!v) return std::nullopt;
            char* end = nullptr;
            errno = 0;
            unsigned long n = std::strtoul(v->c_str(), &end, 10);
            if (v->empty() || *end != '\0' || errno != 0 || n > (roots ? 1000 : 1000000) || (*v)[0] == '-' ||
                (roots && n == 0)) {
                complain(std::string(roots ? "--roots needs a number from 1 to 1000" : "--top needs a number of rows") +
                             ", not \"" + *v + "\"",
                         usage);
                return std::nullopt;
            }
            if (roots)
                o.roots = static_cast<unsigned>(n);
            else
                o.top = static_cast<unsigned>(n);
        } else if (a == "--") {
            o.words.insert(o.words.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
            break;
        } else if (a.starts_with("-") && a.size() > 1 && !o.words.empty() &&
                   (o.words[0] == "sites" || o.words[0] == "cpu") && a != "--top" && !a.starts_with("--top=")) {
            o.words.push_back(a);  // heapctl sites and cpu read their own options
        } else if (a.starts_with("-") && a.size() > 1) {
            complain("unknown option " + a + " (see heapctl --help)", usage);
            return std::nullopt;
        } else {
            o.words.push_back(a);
        }
    }
    if (o.words.empty()) {
        std::fputs(usage_text, stderr);
        return std::nullopt;
    }
    return o;
}

// The first line of a kept dump's report: what was dumped, when and why ("" for a file: heapd
// analyze's own heading names it).
std::string report_title(const wire::json& result) {
    auto d = result.find("dump");
    if (d == result.end() || !d->is_object() || d->value("source", std::string()) != "dump") return "";
    std::string title = "heapctl report: dump " + dump_name(*d);
    if (const std::int64_t pid = d->value("pid", std::int64_t{0}); pid != 0) title += ", pid " + std::to_string(pid);
    std::string command = d->value("command_line", std::string());
    if (const auto space = command.find(' '); space != std::string::npos) command.resize(space);
    if (!command.empty()) title += " (" + line_safe(command) + ")";
    if (const std::string label = container_label(*d); !label.empty()) title += " in container " + label;
    if (const std::string trigger = d->value("trigger", std::string()); !trigger.empty())
        title += ", trigger " + trigger;
    // The OutOfMemoryError heapd's agent saw, in the JVM's words.
    if (const std::string kind = d->value("oom_kind", std::string()); !kind.empty())
        title += " (" + line_safe(kind) + ": " + line_safe(d->value("oom_error", std::string())) + ")";
    return title;
}

// What the store told about a report's dump ({dump, growth, history}), for its HTML page.
html_context html_context_of(const wire::json& result) {
    html_context c;
    if (auto d = result.find("dump");
        d != result.end() && d->is_object() && d->value("source", std::string()) == "dump") {
        c.dump_id = d->value("id", std::string());
        c.host = d->value("host", std::string());
        c.trigger = d->value("trigger", std::string());
        c.command_line = d->value("command_line", std::string());
        c.pid = d->value("pid", std::int64_t{0});
        c.created_ms = d->value("created_ms", std::int64_t{0});
    }
    if (auto g = result.find("growth"); g != result.end() && g->is_object()) {
        if (auto diff = diff_from_json(g->value("diff", wire::json::object()))) c.growth = std::move(*diff);
        c.previous_dump = dump_name(g->value("previous", wire::json::object()));
    }
    if (auto h = result.find("history"); h != result.end())
        if (auto points = history_from_json(*h)) c.history = std::move(*points);
    return c;
}

// Prints a report reply ({dump, report, growth}) as text or JSON; 2 when the dump is damaged.
int print_report(const wire::json& result, const options& o) {
    auto it = result.find("report");
    if (it == result.end()) return complain("heapd's reply has no report", protocol_mismatch);
    auto report = report_from_json(*it);
    if (!report) return complain("heapd's report cannot be read: " + report.error().message, protocol_mismatch);
    if (o.json && o.sections == text_options::histogram)
        print_json(it->value("histogram", wire::json::array()));
    else if (o.json && o.sections == text_options::threads)
        print_json(it->value("threads", wire::json::array()));
    else if (o.json)
        print_json(*it);
    else
        print(render_text(*report, {o.top.value_or(20), 32, o.sections, report_title(result)}));
    if (!o.json && o.sections == text_options::all)
        if (auto g = result.find("growth"); g != result.end() && g->is_object()) print_growth(*g);
    int html_status = o.html.empty() ? ok : write_html(o, render_html(*report, html_context_of(result)));
    bool damaged = false;
    for (const problem_report& p : report->problems) {
        std::fprintf(stderr, "heapctl: %s: %s: %s (at file offset %llu)\n", p.truncation ? "warning" : "error",
                     terminal_safe(report->summary.file).c_str(), terminal_safe(p.message).c_str(),
                     static_cast<unsigned long long>(p.offset));
        damaged = damaged || !p.truncation;
    }
    if (report->problems_omitted != 0) {
        std::fprintf(stderr, "heapctl: error: %s: and %llu more problems like these, not listed\n",
                     terminal_safe(report->summary.file).c_str(),
                     static_cast<unsigned long long>(report->problems_omitted));
        damaged = true;
    }
    if (!o.json)
        if (auto d = result.find("dump"); d != result.end() && d->is_object() && d->contains("id"))
            print("\nKept as dump " + d->at("id").get<std::string>() + " (heapctl report " +
                  d->at("id").get<std::string>() + " shows it again)\n");
    return damaged ? bad_input : html_status;
}

int report_file(const options& o, const std::string& file, int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return complain("cannot stat " + file + ": " + std::strerror(errno), bad_input);
    if (!S_ISREG(st.st_mode)) return complain(file + " is not a regular file", bad_input);
    auto client = daemon_client::connect(o.socket);
    if (!client) return complain(client.error());
    std::error_code ec;
    std::string name = std::filesystem::absolute(file, ec).lexically_normal().string();
    if (ec) name = file;
    progress_bar bar(std::filesystem::path(file).filename().string());
    // JSON without --top carries the whole histogram, as `heapd analyze --json` does.
    const unsigned top = o.top.value_or(o.json ? 0 : 20);
    auto result = client->call(
        "analyze", {{"name", name}, {"wait", true}, {"top", top}, {"history", !o.html.empty()}}, fd,
        [&bar](const wire::progress_event& e) { bar.update(e); }, [&bar] { bar.tick(); });
    bar.clear();
    if (!result) return complain(result.error());
    return print_report(*result, o);
}

// A dump of the JVM pid (a new job) and, with wait, its report; fresh reports take this path too.
int dump_jvm(const options& o, const std::string& pid, bool wait) {
    auto client = daemon_client::connect(o.socket);
    if (!client) return complain(client.error());
    progress_bar bar("pid " + pid);
    const unsigned top = o.top.value_or(o.json ? 0 : 20);
    auto result = client->call(
        "dump",
        {{"pid", std::stoull(pid)},
         {"live", !o.all},
         {"wait", wait},
         {"top", top},
         {"history", wait && !o.html.empty()}},
        -1, [&bar](const wire::progress_event& e) { bar.update(e); }, [&bar] { bar.tick(); });
    bar.clear();
    if (!result) return complain(result.error());
    if (wait) return print_report(*result, o);
    if (o.json)
        print_json(*result);
    else
        print("dump of pid " + pid + " started: job " +
              std::to_string(result->value("job", wire::json::object()).value("id", 0ull)) +
              " (heapctl jobs follows it, heapctl report " + pid + " shows its report)\n");
    return ok;
}

int report_pid(const options& o, const std::string& pid) {
    if (o.fresh) return dump_jvm(o, pid, true);
    auto client = daemon_client::connect(o.socket);
    if (!client) return complain(client.error());
    auto result = client->call(
        "report", {{"pid", std::stoull(pid)}, {"top", o.top.value_or(o.json ? 0 : 20)}, {"history", !o.html.empty()}});
    if (!result) {
        if (result.error().code == not_found)
            return complain(result.error().message + " (heapctl report " + pid + " --fresh takes one now)", not_found);
        return complain(result.error());
    }
    return print_report(*result, o);
}

int dump(const options& o) {
    if (o.words.size() != 2 || !is_pid(o.words[1])) return complain("dump needs one PID (see heapctl --help)", usage);
    return dump_jvm(o, o.words[1], o.wait);
}

int report(const options& o) {
    if (o.words.size() != 2) return complain("report needs one FILE or DUMP (see heapctl --help)", usage);
    const std::string& what = o.words[1];
    // Opened here, with the caller's rights, before heapd hears of it.
    int fd = ::open(what.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd >= 0) {
        int status = report_file(o, what, fd);
        ::close(fd);
        return status;
    }
    const int err = errno;
    if (err == ENOENT && is_pid(what)) return report_pid(o, what);
    if (err != ENOENT || !looks_like_dump_id(what))
        return complain("cannot open " + what + ": " + std::strerror(err), bad_input);
    auto client = daemon_client::connect(o.socket);
    if (!client) return complain(client.error());
    auto result = client->call(
        "report", {{"dump", what}, {"top", o.top.value_or(o.json ? 0 : 20)}, {"history", !o.html.empty()}});
    if (!result) {
        if (result.error().code == not_found)
            return complain("no file or dump named " + what + " (" + result.error().message + ")", not_found);
        return complain(result.error());
    }
    return print_report(*result, o);
}

// status, jobs, dumps: one request, its result printed: with --json the part under key (all of it
// for none), else as text of that part, or of the whole reply when whole_text says so.
int listing(const options& o, const std::string& type, std::string (*text)(const wire::json&), const char* key,
            bool whole_text = false) {
    if (o.words.size() != 1) return complain(type + " takes no arguments", usage);
    auto client = daemon_client::connect(o.socket);
    if (!client) return complain(client.error());
    auto result = client->call(type, wire::json::object());
    if (!result) return complain(result.error());
    const wire::json& shown = key == nullptr ? *result : result->value(key, wire::json::array());
    if (o.json)
        print_json(shown);
    else
        print(text(whole_text ? *result : shown));
    return ok;
}

int remove(const options& o) {
    if (o.words.size() != 2) return complain("rm needs one DUMP id", usage);
    auto client = daemon_client::connect(o.socket);
    if (!client) return complain(client.error());
    auto result = client->call("rm", {{"dump", o.words[1]}});
    if (!result) return complain(result.error());
    if (o.json)
        print_json(*result);
    else
        print("removed dump " + o.words[1] + "\n");
    return ok;
}

int cancel(const options& o) {
    if (o.words.size() != 2) return complain("cancel needs one JOB id", usage);
    char* end = nullptr;
    unsigned long long id = std::strtoull(o.words[1].c_str(), &end, 10);
    if (o.words[1].empty() || *end != '\0' || o.words[1][0] == '-') return complain("a job id is a number", usage);
    auto client = daemon_client::connect(o.socket);
    if (!client) return complain(client.error());
    auto result = client->call("cancel", {{"job", id}});
    if (!result) return complain(result.error());
    if (o.json)
        print_json(*result);
    else {
        const std::string state = result->value("job", wire::json::object()).value("state", std::string("?"));
        print("job " + o.words[1] + ": " + (state == "running" ? std::string("stopping") : state) + "\n");
    }
    return ok;
}

// The daemon's metrics, printed as heapd wrote them (Prometheus text format 0.0.4).
int metrics(const options& o) {
    if (o.words.size() != 1) return complain("metrics takes no arguments", usage);
    if (o.json) return complain("metrics are Prometheus text; --json does not apply to them", usage);
    auto client = daemon_client::connect(o.socket);
    if (!client) return complain(client.error());
    auto result = client->call("metrics", wire::json::object());
    if (!result) return complain(result.error());
    auto text = result->find("text");
    if (text == result->end() || !text->is_string())
        return complain("heapd's reply has no metrics text", protocol_mismatch);
    print(text->get<std::string>());
    return ok;
}

}  // namespace

int run(int argc, char** argv) {
    int status = usage;
    auto o = parse(argc, argv, status);
    if (!o) return status;
    const std::string& command = o->words[0];
    if (command == "status") return listing(*o, "status", status_text, nullptr);
    if (command == "jobs") return listing(*o, "jobs", jobs_text, "jobs");
    if (command == "dumps") return listing(*o, "dumps", dumps_reply_text, "dumps", true);
    if (command == "deaths") return listing(*o, "deaths", deaths_reply_text, "deaths", true);
    if (command == "report") return report(*o);
    if (command == "histo" || command == "threads") {
        o->sections = command == "histo" ? text_options::histogram : text_options::threads;
        o->words[0] = "report";
        return report(*o);
    }
    if (command == "rm") return remove(*o);
    if (command == "jvms") return listing(*o, "jvms", jvms_reply_text, "jvms", true);
    if (command == "dump") return dump(*o);
    if (command == "cancel") return cancel(*o);
    if (command == "diff") return diff(*o);
    if (command == "path") return path(*o);
    if (command == "metrics") return metrics(*o);
    if (command == "sites" || command == "cpu") return sites(*o);
    if (command == "memory") return memory(*o);
    return complain("unknown command " + command + " (see heapctl --help)", usage);
}

}  // namespace heapd::cli

int main(int argc, char** argv) { return heapd::cli::run(argc, argv); }
