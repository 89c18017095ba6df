#include "support/prometheus_text.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>

#include "support/jvm_process.h"

namespace heapd::test {
namespace {

bool name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':'; }
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }

bool valid_metric_name(std::string_view n) {
    if (n.empty() || !name_start(n[0])) return false;
    for (char c : n)
        if (!name_char(c)) return false;
    return true;
}

bool valid_label_name(std::string_view n) {
    if (n.empty() || !name_start(n[0]) || n[0] == ':' || n.starts_with("__")) return false;
    for (char c : n)
        if (!name_char(c) || c == ':') return false;
    return true;
}

// Unescapes \\ and \n (and \" when quotes is set); nothing when another escape or a lone backslash.
std::optional<std::string> unescape(std::string_view s, bool quotes) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '\\') {
            out += s[i];
            continue;
        }
        if (++i == s.size()) return std::nullopt;
        if (s[i] == '\\')
            out += '\\';
        else if (s[i] == 'n')
            out += '\n';
        else if (s[i] == '"' && quotes)
            out += '"';
        else
            return std::nullopt;
    }
    return out;
}

std::optional<double> parse_value(const std::string& s) {
    if (s == "NaN") return NAN;
    if (s == "+Inf") return INFINITY;
    if (s == "-Inf") return -INFINITY;
    if (s.empty() || s.find_first_not_of("0123456789+-.eE") != std::string::npos) return std::nullopt;
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || errno != 0) return std::nullopt;
    return v;
}

// Reads `{a="x",b="y"}` from the start of s; advances s past it.
std::expected<std::map<std::string, std::string>, std::string> parse_labels(std::string_view& s) {
    std::map<std::string, std::string> labels;
    s.remove_prefix(1);  // '{'
    if (!s.empty() && s[0] == '}') return std::unexpected("empty braces");
    for (;;) {
        std::size_t eq = s.find('=');
        if (eq == std::string_view::npos) return std::unexpected("a label without =");
        std::string key(s.substr(0, eq));
        if (!valid_label_name(key)) return std::unexpected("bad label name \"" + key + "\"");
        s.remove_prefix(eq + 1);
        if (s.empty() || s[0] != '"') return std::unexpected("label " + key + ": value not quoted");
        std::size_t i = 1;
        while (i < s.size() && s[i] != '"') i += s[i] == '\\' ? 2 : 1;
        if (i >= s.size()) return std::unexpected("label " + key + ": value not closed");
        auto value = unescape(s.substr(1, i - 1), true);
        if (!value) return std::unexpected("label " + key + ": a bad escape");
        if (!labels.emplace(key, *value).second) return std::unexpected("label " + key + " twice");
        s.remove_prefix(i + 1);
        if (s.empty()) return std::unexpected("labels not closed");
        if (s[0] == '}') {
            s.remove_prefix(1);
            return labels;
        }
        if (s[0] != ',') return std::unexpected("labels not separated by a comma");
        s.remove_prefix(1);
    }
}

// The family a sample name belongs to, given the family being read.
bool belongs(const prom_family& f, const std::string& sample) {
    if (f.type == "histogram")
        return sample == f.name + "_bucket" || sample == f.name + "_sum" || sample == f.name + "_count";
    if (f.type == "summary") return sample == f.name || sample == f.name + "_sum" || sample == f.name + "_count";
    return sample == f.name;
}

std::string series_key(const prom_sample& s) {
    std::string k = s.name;
    for (const auto& [n, v] : s.labels) k += "\x1f" + n + "=" + v;
    return k;
}

// Buckets cumulative and ascending, +Inf equal to _count, _sum present: for each label set.
std::string check_histogram(const prom_family& f) {
    struct series {
        std::vector<std::pair<double, double>> buckets;
        std::optional<double> sum, count;
    };
    std::map<std::map<std::string, std::string>, series> all;
    for (const prom_sample& s : f.samples) {
        auto labels = s.labels;
        if (s.name == f.name + "_bucket") {
            auto le = labels.find("le");
            if (le == labels.end()) return f.name + ": a bucket without le";
            auto bound = parse_value(le->second);
            if (!bound) return f.name + ": le=\"" + le->second + "\" is not a number";
            labels.erase(le);
            all[labels].buckets.emplace_back(*bound, s.value);
        } else if (labels.contains("le")) {
            return f.name + ": le on " + s.name;
        } else if (s.name == f.name + "_sum") {
            all[labels].sum = s.value;
        } else {
            all[labels].count = s.value;
        }
    }
    for (const auto& [labels, h] : all) {
        if (h.buckets.empty() || !h.sum || !h.count) return f.name + ": a series without buckets, _sum or _count";
        for (std::size_t i = 1; i < h.buckets.size(); ++i)
            if (!(h.buckets[i].first > h.buckets[i - 1].first) || h.buckets[i].second < h.buckets[i - 1].second)
                return f.name + ": buckets not ascending or not cumulative";
        if (!std::isinf(h.buckets.back().first)) return f.name + ": no +Inf bucket";
        if (h.buckets.back().second != *h.count) return f.name + ": the +Inf bucket differs from _count";
    }
    return "";
}

}  // namespace

std::vector<const prom_sample*> prom_exposition::find(const std::string& name,
                                                      const std::map<std::string, std::string>& labels) const {
    std::vector<const prom_sample*> out;
    for (const auto& [n, f] : families)
        for (const prom_sample& s : f.samples) {
            if (s.name != name) continue;
            bool all = true;
            for (const auto& [k, v] : labels) {
                auto it = s.labels.find(k);
                all = all && it != s.labels.end() && it->second == v;
            }
            if (all) out.push_back(&s);
        }
    return out;
}

std::optional<double> prom_exposition::value(const std::string& name,
                                             const std::map<std::string, std::string>& labels) const {
    auto found = find(name, labels);
    if (found.size() != 1) return std::nullopt;
    return found[0]->value;
}

std::expected<prom_exposition, std::string> parse_prometheus_text(std::string_view text) {
    prom_exposition e;
    if (text.empty() || text.back() != '\n') return std::unexpected("the text does not end with a line feed");
    std::set<std::string> series;
    prom_family* current = nullptr;
    std::size_t line_no = 0;
    while (!text.empty()) {
        ++line_no;
        const std::size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl + 1);
        auto bad = [&](const std::string& why) {
            return std::unexpected("line " + std::to_string(line_no) + ": " + why + ": " + std::string(line));
        };
        if (line.empty()) return bad("a blank line");
        if (line[0] == '#') {
            const bool help = line.starts_with("# HELP "), type = line.starts_with("# TYPE ");
            if (!help && !type) return bad("a comment that is neither HELP nor TYPE");
            std::string_view rest = line.substr(7);
            const std::size_t sp = rest.find(' ');
            if (sp == std::string_view::npos) return bad("no text after the name");
            const std::string name(rest.substr(0, sp));
            if (!valid_metric_name(name)) return bad("a bad metric name");
            std::string_view what = rest.substr(sp + 1);
            prom_family& f = e.families[name];
            if (!f.samples.empty()) return bad("HELP or TYPE after the family's samples");
            if (current != nullptr && current != &f) {
                if (current->samples.empty()) return bad("a family without samples before it");
                if (!f.type.empty() || !f.help.empty()) return bad("a family read before, again");
            }
            f.name = name;
            current = &f;
            if (help) {
                if (!f.help.empty()) return bad("HELP twice");
                auto h = unescape(what, false);
                if (!h || h->empty()) return bad("HELP empty or with a bad escape");
                f.help = *h;
            } else {
                if (!f.type.empty()) return bad("TYPE twice");
                if (what != "counter" && what != "gauge" && what != "histogram" && what != "summary" &&
                    what != "untyped")
                    return bad("an unknown type");
                f.type = std::string(what);
                if (f.type == "counter" && !name.ends_with("_total")) return bad("a counter not named _total");
                if (f.type != "counter" && name.ends_with("_total")) return bad("a non-counter named _total");
            }
            continue;
        }
        prom_sample s;
        std::size_t end = 0;
        while (end < line.size() && line[end] != '{' && line[end] != ' ') ++end;
        s.name = std::string(line.substr(0, end));
        if (!valid_metric_name(s.name)) return bad("a bad metric name");
        std::string_view rest = line.substr(end);
        if (!rest.empty() && rest[0] == '{') {
            auto labels = parse_labels(rest);
            if (!labels) return bad(labels.error());
            s.labels = std::move(*labels);
        }
        if (rest.size() < 2 || rest[0] != ' ') return bad("no value after one space");
        const std::string value(rest.substr(1));
        if (value.find(' ') != std::string::npos) return bad("a timestamp or more than one value");
        auto v = parse_value(value);
        if (!v) return bad("a value that is not a number");
        s.value = *v;
        if (current == nullptr || !belongs(*current, s.name)) return bad("a sample outside its family");
        if (current->help.empty() || current->type.empty()) return bad("a sample before its family's HELP and TYPE");
        if (current->type == "counter" && !(s.value >= 0)) return bad("a negative or NaN counter");
        if (!series.insert(series_key(s)).second) return bad("the same series twice");
        current->samples.push_back(std::move(s));
    }
    for (const auto& [name, f] : e.families) {
        if (f.samples.empty()) return std::unexpected("family " + name + " has no samples");
        if (f.type == "histogram")
            if (std::string why = check_histogram(f); !why.empty()) return std::unexpected(why);
    }
    return e;
}

std::string promtool_check(const std::string& text) {
    if (::access("/usr/bin/promtool", X_OK) != 0)
        return "/usr/bin/promtool is missing (Debian package prometheus; .ci/setup installs it)";
    char path[] = "/tmp/heapd-metrics-XXXXXX";
    int fd = ::mkstemp(path);
    if (fd < 0) return "mkstemp failed";
    ::close(fd);
    { std::ofstream(path, std::ios::binary) << text; }
    auto r = run_command({"sh", "-c", "exec /usr/bin/promtool check metrics < \"$1\"", "sh", path});
    ::unlink(path);
    if (r.exit_code == 0 && r.out.empty()) return "";
    return "promtool exit " + std::to_string(r.exit_code) + ": " + r.out + r.err;
}

}  // namespace heapd::test
