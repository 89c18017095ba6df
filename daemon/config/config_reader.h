#pragma once
// Reading the values of a parsed config file (toml++), noting each wrong one with its place. Used
// by config_file.cpp and config_rules.cpp only: nothing else sees toml++.
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#ifndef TOML_EXCEPTIONS
#define TOML_EXCEPTIONS 0  // parse errors come back as values
#endif
#include <toml++/toml.h>

#include "daemon/config/config_file.h"

namespace heapd::daemon {

// Reads typed values out of TOML nodes; a value of the wrong type or out of range is an error
// noted with its line and column, and reads as nullopt.
class config_reader {
public:
    explicit config_reader(std::string file) : file_(std::move(file)) {}

    void error(const toml::source_region& where, std::string message);
    // Notes each key of t not in known: unknown key "x" in [section] (did you mean "y"?).
    void only_known_keys(const toml::table& t, std::string_view section, std::initializer_list<std::string_view> known);

    // what names the value in messages ("daemon.workers").
    std::optional<std::string> string(const toml::node& n, const std::string& what);
    // An absolute path, or "" when may_be_empty.
    std::optional<std::string> path(const toml::node& n, const std::string& what, bool may_be_empty);
    std::optional<std::int64_t> integer(const toml::node& n, const std::string& what, std::int64_t min,
                                        std::int64_t max);
    std::optional<bool> boolean(const toml::node& n, const std::string& what);
    // A number above 0 and at most 100.
    std::optional<double> percent(const toml::node& n, const std::string& what);
    // A duration string (config_values.h) of at least min.
    std::optional<std::chrono::milliseconds> duration(const toml::node& n, const std::string& what,
                                                      std::chrono::milliseconds min);
    // A duration string of whole seconds, at least min.
    std::optional<std::chrono::seconds> seconds(const toml::node& n, const std::string& what, std::chrono::seconds min);
    // A size string ("20G") or a number of bytes.
    std::optional<std::uint64_t> size(const toml::node& n, const std::string& what);

    const std::string& file() const { return file_; }
    bool ok() const { return errors_.empty(); }
    // The errors noted, in the order of the file.
    std::vector<config_error> take();

private:
    std::string file_;
    std::vector<config_error> errors_;
};

// Calls read(node) for key of t when it is there, and stores what it gives (when not nullopt) in target.
template <class T, class Read>
void read_key(const toml::table& t, std::string_view key, T& target, Read read) {
    if (const toml::node* n = t.get(key))
        if (auto v = read(*n)) target = static_cast<T>(*v);
}

// "a string", "an integer", ... for messages.
std::string_view type_phrase(toml::node_type t);

// A JVM selector's keys of table t (main_class, command, user, container) into s; prefix names
// them in messages ("rule.", "oom.select.").
void read_selector(config_reader& r, const toml::table& t, const std::string& prefix, jvm_selector& s);

// The [[rule]] array (rules: the node under the key "rule") into out.
void read_rules(config_reader& r, const toml::node& rules, std::vector<dump_rule>& out);

}  // namespace heapd::daemon
