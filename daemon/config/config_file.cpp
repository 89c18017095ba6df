#include "daemon/config/config_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/unique_fd.h"
#include "daemon/config/config_reader.h"
#include "daemon/config/config_values.h"

#ifndef HEAPD_CONFIG_FILE
#define HEAPD_CONFIG_FILE "/etc/heapd/heapd.toml"
#endif

namespace heapd::daemon {
namespace {

using namespace std::chrono_literals;

constexpr std::size_t max_config_bytes = 1u << 20;

// The table under key of the document, or null (an error noted when it is something else).
const toml::table* section(config_reader& r, const toml::table& doc, std::string_view key) {
    const toml::node* n = doc.get(key);
    if (n == nullptr) return nullptr;
    if (const toml::table* t = n->as_table()) return t;
    r.error(n->source(), std::string(key) + " must be a table ([" + std::string(key) + "]), not " +
                             std::string(type_phrase(n->type())));
    return nullptr;
}

void read_daemon(config_reader& r, const toml::table& t, heapd_config& c) {
    r.only_known_keys(
        t, "[daemon]",
        {"socket", "store", "spool", "group", "workers", "poll_interval", "max_connections", "max_connections_per_user",
         "idle_timeout", "shutdown_grace", "analysis_memory", "agent_library", "disk_reserve", "disk_reserve_percent"});
    serve_options& s = c.serve;
    read_key(t, "socket", s.socket_path, [&](const toml::node& n) -> std::optional<std::string> {
        auto p = r.path(n, "daemon.socket", false);
        // sockaddr_un holds 107 bytes and a terminating zero.
        if (p && p->size() > 107) {
            r.error(n.source(), "daemon.socket must be at most 107 bytes long, not " + std::to_string(p->size()));
            return std::nullopt;
        }
        return p;
    });
    read_key(t, "store", s.store_dir, [&](const toml::node& n) { return r.path(n, "daemon.store", false); });
    read_key(t, "spool", s.spool_dir, [&](const toml::node& n) { return r.path(n, "daemon.spool", true); });
    read_key(t, "group", s.group, [&](const toml::node& n) -> std::optional<std::string> {
        auto g = r.string(n, "daemon.group");
        if (g && g->empty()) {
            r.error(n.source(), "daemon.group must name a group, not \"\"");
            return std::nullopt;
        }
        return g;
    });
    read_key(t, "workers", s.workers, [&](const toml::node& n) { return r.integer(n, "daemon.workers", 1, 64); });
    read_key(t, "max_connections", s.max_connections,
             [&](const toml::node& n) { return r.integer(n, "daemon.max_connections", 1, 65536); });
    read_key(t, "max_connections_per_user", s.max_connections_per_user,
             [&](const toml::node& n) { return r.integer(n, "daemon.max_connections_per_user", 1, 65536); });
    read_key(t, "idle_timeout", s.idle_timeout,
             [&](const toml::node& n) { return r.duration(n, "daemon.idle_timeout", 100ms); });
    read_key(t, "analysis_memory", s.analysis_memory,
             [&](const toml::node& n) { return r.size(n, "daemon.analysis_memory"); });
    read_key(t, "disk_reserve", s.reserve.floor, [&](const toml::node& n) { return r.size(n, "daemon.disk_reserve"); });
    read_key(t, "disk_reserve_percent", s.reserve.percent,
             [&](const toml::node& n) { return r.integer(n, "daemon.disk_reserve_percent", 0, 100); });
    read_key(t, "agent_library", s.agent_library,
             [&](const toml::node& n) { return r.path(n, "daemon.agent_library", true); });
    read_key(t, "shutdown_grace", s.shutdown_grace,
             [&](const toml::node& n) { return r.duration(n, "daemon.shutdown_grace", 0ms); });
    read_key(t, "poll_interval", c.poll_interval,
             [&](const toml::node& n) { return r.duration(n, "daemon.poll_interval", 100ms); });
}

void read_retention(config_reader& r, const toml::table& t, retention_policy& p) {
    r.only_known_keys(t, "[retention]",
                      {"keep_count", "keep_bytes", "keep_days", "keep_count_per_user", "keep_bytes_per_user"});
    constexpr std::int64_t huge = std::int64_t{1} << 40;
    read_key(t, "keep_count", p.max_count,
             [&](const toml::node& n) { return r.integer(n, "retention.keep_count", 0, huge); });
    read_key(t, "keep_bytes", p.max_bytes, [&](const toml::node& n) { return r.size(n, "retention.keep_bytes"); });
    read_key(t, "keep_count_per_user", p.max_count_per_owner,
             [&](const toml::node& n) { return r.integer(n, "retention.keep_count_per_user", 0, huge); });
    read_key(t, "keep_bytes_per_user", p.max_bytes_per_owner,
             [&](const toml::node& n) { return r.size(n, "retention.keep_bytes_per_user"); });
    read_key(t, "keep_days", p.max_age_days,
             [&](const toml::node& n) { return r.integer(n, "retention.keep_days", 0, 1'000'000); });
}

void read_metrics(config_reader& r, const toml::table& t, metrics_options& m) {
    r.only_known_keys(t, "[metrics]", {"textfile", "interval"});
    read_key(t, "textfile", m.textfile, [&](const toml::node& n) { return r.path(n, "metrics.textfile", true); });
    read_key(t, "interval", m.interval, [&](const toml::node& n) { return r.seconds(n, "metrics.interval", 1s); });
}

void read_oom(config_reader& r, const toml::table& t, oom_options& o) {
    r.only_known_keys(t, "[oom]", {"arm", "select", "poll_interval", "recheck"});
    read_key(t, "arm", o.arm, [&](const toml::node& n) -> std::optional<arm_mode> {
        if (const auto* b = n.as_boolean()) return b->get() ? arm_mode::all : arm_mode::none;
        if (const auto* s = n.as_string())
            if (auto mode = arm_mode_named(s->get())) return mode;
        r.error(n.source(), "oom.arm must be true, false, \"all\", \"hooked\" or \"none\"");
        return std::nullopt;
    });
    if (const toml::node* n = t.get("select")) {
        const toml::array* list = n->as_array();
        if (!list || !list->is_array_of_tables()) {
            r.error(n->source(), "oom.select must be tables: [[oom.select]] with main_class, command, user, container");
        } else {
            o.select.clear();
            for (const toml::node& one : *list) {
                const toml::table& sel = *one.as_table();
                r.only_known_keys(sel, "[[oom.select]]",
                                  {"main_class", "command", "user", "container", "pod", "namespace"});
                jvm_selector s;
                read_selector(r, sel, "oom.select.", s);
                o.select.push_back(std::move(s));
            }
        }
    }
    read_key(t, "poll_interval", o.poll_interval,
             [&](const toml::node& n) { return r.duration(n, "oom.poll_interval", 100ms); });
    read_key(t, "recheck", o.recheck, [&](const toml::node& n) { return r.duration(n, "oom.recheck", 1000ms); });
}

void read_upload(config_reader& r, const toml::table& t, upload_options& u) {
    r.only_known_keys(t, "[upload]",
                      {"endpoint", "bucket", "prefix", "region", "credentials_file", "html", "dump", "deaths",
                       "part_size", "state", "interval", "metrics_textfile"});
    read_key(t, "endpoint", u.endpoint, [&](const toml::node& n) -> std::optional<std::string> {
        auto e = r.string(n, "upload.endpoint");
        if (e && !e->starts_with("https://") && !e->starts_with("http://")) {
            r.error(n.source(), "upload.endpoint must be an http:// or https:// URL, not \"" + *e + "\"");
            return std::nullopt;
        }
        while (e && e->ends_with('/')) e->pop_back();
        return e;
    });
    read_key(t, "bucket", u.bucket, [&](const toml::node& n) -> std::optional<std::string> {
        auto b = r.string(n, "upload.bucket");
        // S3's rules for bucket names: 3 to 63 lower-case letters, digits, '.' and '-'.
        if (b && (b->size() < 3 || b->size() > 63 ||
                  b->find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789.-") != std::string::npos)) {
            r.error(n.source(), "upload.bucket must be 3 to 63 lower-case letters, digits, '.' and '-'");
            return std::nullopt;
        }
        return b;
    });
    read_key(t, "prefix", u.prefix, [&](const toml::node& n) -> std::optional<std::string> {
        auto p = r.string(n, "upload.prefix");
        while (p && (p->starts_with('/') || p->ends_with('/'))) p->erase(p->starts_with('/') ? 0 : p->size() - 1, 1);
        return p;
    });
    read_key(t, "region", u.region, [&](const toml::node& n) { return r.string(n, "upload.region"); });
    read_key(t, "credentials_file", u.credentials_file,
             [&](const toml::node& n) { return r.path(n, "upload.credentials_file", true); });
    read_key(t, "html", u.html, [&](const toml::node& n) { return r.boolean(n, "upload.html"); });
    read_key(t, "dump", u.dump, [&](const toml::node& n) { return r.boolean(n, "upload.dump"); });
    read_key(t, "deaths", u.deaths, [&](const toml::node& n) { return r.boolean(n, "upload.deaths"); });
    read_key(t, "part_size", u.part_size, [&](const toml::node& n) -> std::optional<std::uint64_t> {
        auto size = r.size(n, "upload.part_size");
        // S3 takes parts of 5 MiB to 5 GiB (the last may be smaller).
        if (size && (*size < (5u << 20) || *size > (std::uint64_t{5} << 30))) {
            r.error(n.source(), "upload.part_size must be 5M to 5G");
            return std::nullopt;
        }
        return size;
    });
    read_key(t, "state", u.state_dir, [&](const toml::node& n) { return r.path(n, "upload.state", false); });
    read_key(t, "interval", u.interval, [&](const toml::node& n) { return r.seconds(n, "upload.interval", 1s); });
    read_key(t, "metrics_textfile", u.metrics_textfile,
             [&](const toml::node& n) { return r.path(n, "upload.metrics_textfile", true); });
    if (!u.endpoint.empty() && u.bucket.empty()) r.error(t.source(), "[upload] with an endpoint needs a bucket");
}

}  // namespace

std::string config_error::describe() const {
    if (line <= 0) return file + ": " + message;
    return file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message;
}

std::string default_config_path() { return HEAPD_CONFIG_FILE; }

config_result parse_config(std::string_view text, const std::string& file, const heapd_config& base) {
    toml::parse_result parsed = toml::parse(text, std::string_view(file));
    if (!parsed) {
        const toml::parse_error& e = parsed.error();
        return std::unexpected(
            std::vector<config_error>{{file, static_cast<int>(e.source().begin.line),
                                       static_cast<int>(e.source().begin.column), std::string(e.description())}});
    }
    const toml::table& doc = parsed.table();
    config_reader r(file);
    heapd_config c = base;
    r.only_known_keys(doc, "the file (tables are [daemon], [retention], [metrics], [oom], [upload] and [[rule]])",
                      {"daemon", "retention", "metrics", "oom", "upload", "rule"});
    if (const toml::table* t = section(r, doc, "daemon")) read_daemon(r, *t, c);
    if (const toml::table* t = section(r, doc, "retention")) read_retention(r, *t, c.serve.retention);
    if (const toml::table* t = section(r, doc, "metrics")) read_metrics(r, *t, c.metrics);
    if (const toml::table* t = section(r, doc, "oom")) read_oom(r, *t, c.oom);
    if (const toml::table* t = section(r, doc, "upload")) read_upload(r, *t, c.upload);
    if (const toml::node* rules = doc.get("rule")) {
        c.rules.clear();
        read_rules(r, *rules, c.rules);
    }
    if (!r.ok()) return std::unexpected(r.take());
    return c;
}

config_result read_config_file(const std::string& path, const heapd_config& base) {
    auto cannot = [&](const std::string& why) { return std::unexpected(std::vector<config_error>{{path, 0, 0, why}}); };
    unique_fd fd(::open(path.c_str(), O_RDONLY | O_NOCTTY | O_CLOEXEC));
    if (!fd) return cannot(std::string("cannot read: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return cannot(std::string("cannot read: ") + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) return cannot("cannot read: not a regular file");
    if (static_cast<std::uint64_t>(st.st_size) > max_config_bytes)
        return cannot("cannot read: larger than " + std::to_string(max_config_bytes) + " bytes");
    std::string text;
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return cannot(std::string("cannot read: ") + std::strerror(errno));
        if (n == 0) break;
        text.append(buf, static_cast<std::size_t>(n));
        if (text.size() > max_config_bytes)
            return cannot("cannot read: larger than " + std::to_string(max_config_bytes) + " bytes");
    }
    return parse_config(text, path, base);
}

void apply_overrides(heapd_config& config, const config_overrides& o) {
    serve_options& s = config.serve;
    if (o.socket_path) s.socket_path = *o.socket_path;
    if (o.store_dir) s.store_dir = *o.store_dir;
    if (o.spool_dir) s.spool_dir = *o.spool_dir;
    if (o.group) s.group = *o.group;
    if (o.workers) s.workers = *o.workers;
    if (o.keep_count) s.retention.max_count = *o.keep_count;
    if (o.keep_bytes) s.retention.max_bytes = *o.keep_bytes;
    if (o.keep_days) s.retention.max_age_days = *o.keep_days;
    if (o.metrics_file) config.metrics.textfile = *o.metrics_file;
    if (o.metrics_interval) config.metrics.interval = *o.metrics_interval;
    if (o.oom_arm) config.oom.arm = *o.oom_arm;
    s.foreground = o.foreground;
}

config_result load_config(const std::string& path, bool must_exist, const heapd_config& base,
                          const config_overrides& overrides) {
    config_result c = base;
    struct stat st {};
    bool absent = path.empty() || (!must_exist && ::stat(path.c_str(), &st) != 0 && errno == ENOENT);
    if (!absent) c = read_config_file(path, base);
    if (c) apply_overrides(*c, overrides);
    return c;
}

}  // namespace heapd::daemon
