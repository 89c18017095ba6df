// `heapd fleet`: the fleet's view of the reports heapd upload put in a bucket (or a local copy laid
// out the same way): reports by service and host, and their leak suspects grouped into findings by
// leak signature (formats/report/fleet_view.h). What an earlier run read is kept in an index and not
// read again.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/atomic_file.h"
#include "base/keyed_hash.h"
#include "base/safe_text.h"
#include "daemon/commands/commands.h"
#include "daemon/config/config_file.h"
#include "daemon/config/config_values.h"
#include "daemon/fleet/fleet_index.h"
#include "daemon/fleet/fleet_source.h"
#include "daemon/upload/uploader.h"
#include "formats/report/fleet_html.h"
#include "formats/report/fleet_view.h"

namespace heapd::daemon {
namespace {

using json = nlohmann::ordered_json;

constexpr std::size_t max_summary_bytes = 1u << 20;
constexpr std::size_t max_report_bytes = 64u << 20;

// The options of one fleet invocation.
struct fleet_args {
    std::string config, dir, prefix, since, service, html, index, link_base, min_retained;
    bool config_given = false, prefix_given = false, as_json = false, no_index = false;
    unsigned top = 10;
    unsigned connections = 8;
};

// What one run read, for the line on stderr and the JSON.
struct read_counts {
    std::size_t listed = 0, read = 0, from_index = 0, unreadable = 0;
};

// --since: a duration back from now ("7d", "12h") or a UTC date ("2026-11-20", "2026-11-20T08:00:00Z");
// milliseconds since the epoch, nothing when it is neither.
std::optional<std::int64_t> since_ms(const std::string& text) {
    const auto now =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    if (auto back = parse_duration(text)) return now - back->count();
    std::tm tm{};
    const char* end = ::strptime(text.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (end == nullptr || *end != '\0') {
        tm = std::tm{};
        end = ::strptime(text.c_str(), "%Y-%m-%d", &tm);
    }
    if (end == nullptr || *end != '\0') return std::nullopt;
    return static_cast<std::int64_t>(::timegm(&tm)) * 1000;
}

// The index of a source when none is named: under $XDG_CACHE_HOME (else ~/.cache)/heapd/, named by
// the source; "" when neither variable is set.
std::string default_index(const std::string& source) {
    std::string base;
    if (const char* cache = std::getenv("XDG_CACHE_HOME"); cache != nullptr && *cache == '/')
        base = cache;
    else if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/')
        base = std::string(home) + "/.cache";
    if (base.empty()) return "";
    char name[40];
    std::snprintf(name, sizeof name, "fleet-%016llx.json",
                  static_cast<unsigned long long>(keyed_hash(hash_key{}, source)));
    return base + "/heapd/" + name;
}

// Where a report lies, from its key: PREFIX/HOST/SERVICE/ID (the prefix of any number of parts).
fleet_context place_of(const std::string& key) {
    fleet_context c;
    c.key = key;
    std::vector<std::string> parts;
    for (std::size_t from = 0;;) {
        const auto slash = key.find('/', from);
        parts.push_back(key.substr(from, slash == std::string::npos ? std::string::npos : slash - from));
        if (slash == std::string::npos) break;
        from = slash + 1;
    }
    c.id = parts.back();
    c.service = parts.size() >= 2 ? parts[parts.size() - 2] : "";
    c.host = parts.size() >= 3 ? parts[parts.size() - 3] : "";
    return c;
}

// A report directory's entry from its file: the summary, or one made from the report. Its key,
// host, service and id are where it lies, whatever the file says: a host that may write to the
// bucket speaks for the keys it may write, never for another host's.
result<fleet_entry> entry_of(const fleet_listed& item, const std::string& bytes) {
    const fleet_context place = place_of(item.key);
    if (item.file != "summary.json") return fleet_entry_of_report(bytes, place);
    const json j = json::parse(bytes, nullptr, false);
    if (j.is_discarded()) return fail(error_code::bad_value, item.file + " is not JSON");
    auto e = fleet_entry_from_json(j);
    if (e) {
        e->key = place.key;
        e->id = place.id;
        e->service = place.service;
        e->host = place.host;
    }
    return e;
}

// Every report of the source, from the index where it is unchanged, the rest read by the source's
// workers at once; the index updated. Results are taken in the listing's order, whatever thread read
// them.
result<std::vector<fleet_entry>> gather(fleet_source& source, fleet_index& index, read_counts& counts) {
    auto listed = source.list();
    if (!listed) return std::unexpected(listed.error());
    counts.listed = listed->size();
    std::vector<fleet_index_item*> known(listed->size(), nullptr);
    std::vector<std::size_t> to_read;
    for (std::size_t i = 0; i < listed->size(); ++i) {
        const fleet_listed& item = (*listed)[i];
        auto at = index.items.find(item.key);
        if (at != index.items.end() && at->second.file == item.file && at->second.version == item.version)
            known[i] = &at->second;
        else
            to_read.push_back(i);
    }
    std::vector<result<fleet_entry>> fresh(to_read.size(),
                                           std::unexpected(error_info{error_code::internal, "not read"}));
    std::atomic<std::size_t> next{0};
    auto work = [&](unsigned worker) {
        for (std::size_t n; (n = next.fetch_add(1)) < to_read.size();) {
            const fleet_listed& item = (*listed)[to_read[n]];
            auto bytes = source.read(item, item.file == "summary.json" ? max_summary_bytes : max_report_bytes, worker);
            fresh[n] = bytes ? entry_of(item, *bytes) : std::unexpected(bytes.error());
        }
    };
    std::vector<std::thread> threads;
    const auto workers = static_cast<unsigned>(std::min<std::size_t>(source.readers(), to_read.size()));
    for (unsigned w = 1; w < workers; ++w) threads.emplace_back(work, w);
    work(0);
    for (std::thread& t : threads) t.join();

    std::map<std::string, fleet_index_item> kept;
    std::vector<fleet_entry> entries;
    entries.reserve(listed->size());
    for (std::size_t i = 0, n = 0; i < listed->size(); ++i) {
        const fleet_listed& item = (*listed)[i];
        if (known[i] != nullptr) {
            ++counts.from_index;
            entries.push_back(known[i]->entry);
            kept.insert_or_assign(item.key, std::move(*known[i]));  // the old index is replaced below
            continue;
        }
        result<fleet_entry>& entry = fresh[n++];
        if (!entry) {
            ++counts.unreadable;
            std::fprintf(stderr, "heapd fleet: %s/%s left out: %s\n", line_safe(item.key).c_str(), item.file.c_str(),
                         line_safe(entry.error().describe()).c_str());
            continue;
        }
        ++counts.read;
        entries.push_back(*entry);
        kept.insert_or_assign(item.key, fleet_index_item{item.file, item.version, std::move(*entry)});
    }
    index.items = std::move(kept);  // reports gone from the source leave the index
    return entries;
}

// The source the arguments name: --dir, else the bucket of the config's [upload].
result<std::unique_ptr<fleet_source>> open_source(const fleet_args& a, int& status) {
    if (!a.dir.empty()) {
        status = bad_input;
        return directory_source(a.dir, a.connections);
    }
    const std::string path = a.config_given ? a.config : default_config_path();
    auto config = read_config_file(path, heapd_config{});
    if (!config) {
        status = bad_input;
        std::string all;
        for (const config_error& e : config.error()) all += (all.empty() ? "" : "\n") + e.describe();
        return fail(error_code::bad_value, all);
    }
    const upload_options& o = config->upload;
    status = usage;
    if (o.endpoint.empty())
        return fail(error_code::not_found, path + " has no [upload] endpoint; name the bucket there, or --dir DIR");
    // As heapd-upload.service has it (LoadCredential=s3:CONFIG DIR/s3-credentials) when the config
    // names no file: the uploader's key, read by whoever may read it.
    std::string credentials_file = credentials_file_of(o);
    if (credentials_file.empty()) credentials_file = parent_of(path) + "/s3-credentials";
    auto credentials = read_credentials(credentials_file);
    status = bad_input;
    if (!credentials) return std::unexpected(credentials.error());
    return bucket_source(s3_target{o.endpoint, o.bucket, o.region, credentials->first, credentials->second},
                         a.prefix_given ? a.prefix : o.prefix, a.connections);
}

int run_fleet(const fleet_args& a) {
    fleet_filter filter;
    filter.service = a.service;
    if (!a.since.empty()) {
        auto since = since_ms(a.since);
        if (!since) {
            std::fprintf(stderr, "heapd fleet: --since %s is neither a duration (7d, 12h) nor a date (2026-11-20)\n",
                         line_safe(a.since).c_str());
            return usage;
        }
        filter.since_ms = *since;
    }
    if (!a.min_retained.empty()) {
        auto size = parse_size(a.min_retained);
        if (!size) {
            std::fprintf(stderr, "heapd fleet: --min-retained %s is not a size (1M, 512K, 0)\n",
                         line_safe(a.min_retained).c_str());
            return usage;
        }
        filter.min_retained = *size;
    }
    int status = ok;
    auto source = open_source(a, status);
    if (!source) {
        std::fprintf(stderr, "heapd fleet: %s\n", line_safe(source.error().describe()).c_str());
        return status;
    }
    const std::string name = (*source)->describe();
    const std::string index_path = a.no_index ? "" : !a.index.empty() ? a.index : default_index(name);
    fleet_index index{name, {}};
    if (!index_path.empty()) {
        auto loaded = load_fleet_index(index_path, name);
        if (loaded)
            index = std::move(*loaded);
        else
            std::fprintf(stderr, "heapd fleet: %s; reading every report again\n",
                         line_safe(loaded.error().describe()).c_str());
    }
    read_counts counts;
    auto entries = gather(**source, index, counts);
    if (!entries) {
        std::fprintf(stderr, "heapd fleet: %s\n", line_safe(entries.error().describe()).c_str());
        return failed;
    }
    if (!index_path.empty())
        if (auto saved = save_fleet_index(index_path, index); !saved)
            std::fprintf(stderr, "heapd fleet: the index is not kept: %s\n",
                         line_safe(saved.error().describe()).c_str());
    std::fprintf(stderr, "heapd fleet: %zu reports in %s: %zu read, %zu from the index%s%s, %zu left out\n",
                 counts.listed, line_safe(name).c_str(), counts.read, counts.from_index, index_path.empty() ? "" : " ",
                 index_path.empty() ? "" : line_safe(index_path).c_str(), counts.unreadable);
    const fleet_view view = build_fleet_view(*entries, filter);
    if (!a.html.empty()) {
        fleet_page page;
        page.source = name;
        page.generated_ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
                .count();
        for (const fleet_service& s : view.services)
            for (const fleet_point& p : s.points) page.links[p.key] = (*source)->page_link(p.key, a.link_base);
        if (auto w = write_file_atomic(a.html, render_fleet_html(view, page), file_access{0644, 0755, 0, false}); !w) {
            std::fprintf(stderr, "heapd fleet: %s\n", line_safe(w.error().describe()).c_str());
            return failed;
        }
    }
    if (a.as_json) {
        json j = to_json(view);
        j["source"] = {{"name", name},
                       {"listed", counts.listed},
                       {"read", counts.read},
                       {"from_index", counts.from_index},
                       {"left_out", counts.unreadable}};
        std::fputs((j.dump(2, ' ', false, json::error_handler_t::replace) + "\n").c_str(), stdout);
    } else if (a.html.empty()) {
        std::fputs(render_text(view, a.top).c_str(), stdout);
    }
    return ok;
}

}  // namespace

void add_fleet(CLI::App& app, int& status) {
    auto args = std::make_shared<fleet_args>();
    CLI::App* sub = app.add_subcommand(
        "fleet",
        "The fleet's view of the reports heapd upload put in the bucket (or a local copy): by service and host, "
        "and their leak suspects grouped into findings by leak signature");
    sub->add_option("--config", args->config,
                    "Config file whose [upload] names the bucket (default: " + default_config_path() + ")")
        ->each([args](const std::string&) { args->config_given = true; });
    sub->add_option("--dir", args->dir, "Read a local directory laid out as the bucket instead");
    sub->add_option("--prefix", args->prefix, "The key prefix to read (default: the config's upload.prefix)")
        ->each([args](const std::string&) { args->prefix_given = true; });
    sub->add_option("--since", args->since, "Only reports made since: a duration back (7d, 12h) or a UTC date");
    sub->add_option("--service", args->service, "Only the reports of this main class (or jar)");
    sub->add_option("--min-retained", args->min_retained,
                    "Leave out suspects retaining less (default 1M: in small heaps JDK structures pass a report's "
                    "share)");
    sub->add_flag("--json", args->as_json, "The view as JSON");
    sub->add_option("--html", args->html, "Write the view as one self-contained HTML page to this file");
    sub->add_option("--link-base", args->link_base,
                    "Where the page links each report's report.html: BASE + KEY + /report.html (default: the "
                    "bucket's URL at its endpoint, or file:// for --dir)");
    sub->add_option("--top", args->top, "Findings and services shown in the text (0: all)")->default_val(10);
    sub->add_option("--connections", args->connections,
                    "Reports read at once (connections to the bucket, or threads for --dir)")
        ->default_val(8)
        ->check(CLI::Range(1, 64));
    sub->add_option("--index", args->index,
                    "Where what was read is kept for the next run (default: ~/.cache/heapd/fleet-ID.json)");
    sub->add_flag("--no-index", args->no_index, "Read every report, keep nothing");
    sub->callback([args, &status] { status = run_fleet(*args); });
}

}  // namespace heapd::daemon
