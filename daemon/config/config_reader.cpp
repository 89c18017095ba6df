#include "daemon/config/config_reader.h"

#include <algorithm>
#include <cmath>

#include "daemon/config/config_values.h"

namespace heapd::daemon {
namespace {

// Edits (insert, delete, replace) between a and b.
std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

std::string in_quotes(std::string_view s) { return "\"" + std::string(s) + "\""; }

constexpr std::string_view duration_examples = "a duration like \"30s\", \"10m\", \"6h\", \"1d\" or \"1h30m\"";

}  // namespace

std::string_view type_phrase(toml::node_type t) {
    switch (t) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number with a fraction";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date and time";
    case toml::node_type::none: break;
    }
    return "nothing";
}

void config_reader::error(const toml::source_region& where, std::string message) {
    errors_.push_back(
        {file_, static_cast<int>(where.begin.line), static_cast<int>(where.begin.column), std::move(message)});
}

void config_reader::only_known_keys(const toml::table& t, std::string_view section,
                                    std::initializer_list<std::string_view> known) {
    for (auto&& [key, value] : t) {
        std::string_view k = key.str();
        if (std::find(known.begin(), known.end(), k) != known.end()) continue;
        std::string message = "unknown key " + in_quotes(k) + " in " + std::string(section);
        std::string_view best;
        std::size_t best_distance = 3;
        for (std::string_view candidate : known) {
            std::size_t d = edit_distance(k, candidate);
            if (d < best_distance && d < std::max<std::size_t>(k.size(), 2)) {
                best = candidate;
                best_distance = d;
            }
        }
        if (!best.empty()) message += " (did you mean " + in_quotes(best) + "?)";
        error(key.source(), std::move(message));
    }
}

std::optional<std::string> config_reader::string(const toml::node& n, const std::string& what) {
    if (const auto* s = n.as_string()) return s->get();
    error(n.source(), what + " must be a string, not " + std::string(type_phrase(n.type())));
    return std::nullopt;
}

std::optional<std::string> config_reader::path(const toml::node& n, const std::string& what, bool may_be_empty) {
    auto s = string(n, what);
    if (!s) return std::nullopt;
    if (s->empty() && may_be_empty) return s;
    if (s->empty() || s->front() != '/' || s->find('\0') != std::string::npos) {
        error(n.source(),
              what + " must be an absolute path" + (may_be_empty ? " or \"\"" : "") + ", not " + in_quotes(*s));
        return std::nullopt;
    }
    return s;
}

std::optional<std::int64_t> config_reader::integer(const toml::node& n, const std::string& what, std::int64_t min,
                                                   std::int64_t max) {
    const auto* i = n.as_integer();
    if (i == nullptr) {
        error(n.source(), what + " must be an integer, not " + std::string(type_phrase(n.type())));
        return std::nullopt;
    }
    if (i->get() < min || i->get() > max) {
        error(n.source(), what + " must be from " + std::to_string(min) + " to " + std::to_string(max) + ", not " +
                              std::to_string(i->get()));
        return std::nullopt;
    }
    return i->get();
}

std::optional<bool> config_reader::boolean(const toml::node& n, const std::string& what) {
    if (const auto* b = n.as_boolean()) return b->get();
    error(n.source(), what + " must be true or false, not " + std::string(type_phrase(n.type())));
    return std::nullopt;
}

std::optional<double> config_reader::percent(const toml::node& n, const std::string& what) {
    std::optional<double> v;
    if (const auto* i = n.as_integer()) v = static_cast<double>(i->get());
    if (const auto* f = n.as_floating_point()) v = f->get();
    if (!v) {
        error(n.source(), what + " must be a percentage (a number), not " + std::string(type_phrase(n.type())));
        return std::nullopt;
    }
    if (!(std::isfinite(*v) && *v > 0 && *v <= 100)) {
        std::string shown = n.is_integer() ? std::to_string(n.as_integer()->get()) : std::to_string(*v);
        error(n.source(), what + " must be a percentage above 0 and at most 100, not " + shown);
        return std::nullopt;
    }
    return v;
}

std::optional<std::chrono::milliseconds> config_reader::duration(const toml::node& n, const std::string& what,
                                                                 std::chrono::milliseconds min) {
    const auto* s = n.as_string();
    if (s == nullptr) {
        error(n.source(), what + " must be " + std::string(duration_examples) + " (a string), not " +
                              std::string(type_phrase(n.type())));
        return std::nullopt;
    }
    auto d = parse_duration(s->get());
    if (!d) {
        error(n.source(), what + " must be " + std::string(duration_examples) + ", not " + in_quotes(s->get()));
        return std::nullopt;
    }
    if (*d < min) {
        error(n.source(), what + " must be at least " + duration_string(min) + ", not " + in_quotes(s->get()));
        return std::nullopt;
    }
    return d;
}

std::optional<std::chrono::seconds> config_reader::seconds(const toml::node& n, const std::string& what,
                                                           std::chrono::seconds min) {
    auto d = duration(n, what, min);
    if (!d) return std::nullopt;
    if (d->count() % 1000 != 0) {
        error(n.source(), what + " must be whole seconds, not " + in_quotes(n.as_string()->get()));
        return std::nullopt;
    }
    return std::chrono::duration_cast<std::chrono::seconds>(*d);
}

std::optional<std::uint64_t> config_reader::size(const toml::node& n, const std::string& what) {
    if (const auto* i = n.as_integer()) {
        if (i->get() >= 0) return static_cast<std::uint64_t>(i->get());
        error(n.source(), what + " must not be negative, not " + std::to_string(i->get()));
        return std::nullopt;
    }
    const auto* s = n.as_string();
    if (s == nullptr) {
        error(n.source(), what + " must be a size like \"512M\" or \"20G\", not " + std::string(type_phrase(n.type())));
        return std::nullopt;
    }
    auto v = parse_size(s->get());
    if (!v) error(n.source(), what + " must be a size like \"512M\" or \"20G\", not " + in_quotes(s->get()));
    return v;
}

std::vector<config_error> config_reader::take() {
    std::stable_sort(errors_.begin(), errors_.end(), [](const config_error& a, const config_error& b) {
        return a.line != b.line ? a.line < b.line : a.column < b.column;
    });
    return std::move(errors_);
}

}  // namespace heapd::daemon
