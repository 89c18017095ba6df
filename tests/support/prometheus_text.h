#pragma once
// A strict reader of the Prometheus text exposition format (0.0.4) for tests: stricter than
// Prometheus itself where heapd promises more (HELP and TYPE for every family, before its samples;
// no other comments, no blank lines, no timestamps; counters named _total and never negative;
// histograms whole and cumulative), so what it accepts any scraper accepts.
#include <expected>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace heapd::test {

// One sample line: its name (with _bucket, _sum, _count for histograms), labels and value.
struct prom_sample {
    std::string name;
    std::map<std::string, std::string> labels;  // values unescaped
    double value = 0;
};

// One metric family: name, TYPE, HELP (unescaped) and its samples in order.
struct prom_family {
    std::string name, type, help;
    std::vector<prom_sample> samples;
};

// A whole exposition, read.
struct prom_exposition {
    std::map<std::string, prom_family> families;
    // Samples named name whose labels include every one of labels.
    std::vector<const prom_sample*> find(const std::string& name,
                                         const std::map<std::string, std::string>& labels = {}) const;
    // The value of the one sample named name with those labels (nothing when none or several match).
    std::optional<double> value(const std::string& name, const std::map<std::string, std::string>& labels = {}) const;
};

// Reads text; the first line that breaks the format (or a promise above), and why, otherwise.
std::expected<prom_exposition, std::string> parse_prometheus_text(std::string_view text);

// Runs `promtool check metrics` (Debian's prometheus package) on text: "" when it accepts it, its
// complaint (or why it could not run) otherwise.
std::string promtool_check(const std::string& text);

}  // namespace heapd::test
