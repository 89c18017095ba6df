// The [[rule]] tables of the config file: which JVMs, when to dump, how often at most.
#include <map>
#include <regex>

#include "daemon/config/config_reader.h"

namespace heapd::daemon {
namespace {

using namespace std::chrono_literals;

// Rule names go into triggers ("rule:NAME"), logs and metric labels: keep them plain.
bool valid_rule_name(const std::string& name) {
    if (name.empty() || name.size() > 64) return false;
    for (char c : name)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
              c == '.'))
            return false;
    return true;
}

// One [[rule]] table into out (with what could be read of it when it has errors).
void read_rule(config_reader& r, const toml::table& t, std::map<std::string, int>& names, std::vector<dump_rule>& out) {
    dump_rule rule;
    rule.line = static_cast<int>(t.source().begin.line);
    r.only_known_keys(t, "[[rule]]",
                      {"name",
                       "main_class",
                       "command",
                       "user",
                       "container",
                       "pod",
                       "namespace",
                       "every",
                       "old_gen_percent",
                       "old_gen_collections",
                       "gc_time_percent",
                       "gc_window",
                       "predict_full_within",
                       "predict_window",
                       "memory_percent",
                       "memory_polls",
                       "memory_full_within",
                       "memory_window",
                       "cooldown",
                       "max_dumps",
                       "live",
                       "action",
                       "sample_interval",
                       "sample_depth"});
    std::string prefix = "the rule at line " + std::to_string(rule.line) + ": ";
    const toml::node* name = t.get("name");
    if (name == nullptr) {
        r.error(t.source(), "this rule has no name (name = \"...\": it names the dumps it takes)");
    } else if (auto n = r.string(*name, "rule.name")) {
        if (!valid_rule_name(*n)) {
            r.error(name->source(), "rule.name must be 1 to 64 letters, digits, '-', '_' or '.', not \"" + *n + "\"");
        } else if (auto [it, fresh] = names.emplace(*n, rule.line); !fresh) {
            r.error(name->source(),
                    "rule name \"" + *n + "\" is already used by the rule at line " + std::to_string(it->second));
        } else {
            rule.name = *n;
            prefix = "rule \"" + *n + "\": ";
        }
    }
    read_selector(r, t, prefix, rule.select);
    read_key(t, "every", rule.every, [&](const toml::node& n) { return r.seconds(n, prefix + "every", 1s); });
    read_key(t, "old_gen_percent", rule.old_gen_percent,
             [&](const toml::node& n) { return r.percent(n, prefix + "old_gen_percent"); });
    read_key(t, "old_gen_collections", rule.old_gen_collections,
             [&](const toml::node& n) { return r.integer(n, prefix + "old_gen_collections", 1, 1'000'000); });
    read_key(t, "gc_time_percent", rule.gc_time_percent,
             [&](const toml::node& n) { return r.percent(n, prefix + "gc_time_percent"); });
    read_key(t, "gc_window", rule.gc_window,
             [&](const toml::node& n) { return r.seconds(n, prefix + "gc_window", 1s); });
    read_key(t, "predict_full_within", rule.predict_full_within,
             [&](const toml::node& n) { return r.seconds(n, prefix + "predict_full_within", 1s); });
    read_key(t, "predict_window", rule.predict_window,
             [&](const toml::node& n) { return r.seconds(n, prefix + "predict_window", 1s); });
    read_key(t, "memory_percent", rule.memory_percent,
             [&](const toml::node& n) { return r.percent(n, prefix + "memory_percent"); });
    read_key(t, "memory_polls", rule.memory_polls,
             [&](const toml::node& n) { return r.integer(n, prefix + "memory_polls", 1, 1'000'000); });
    read_key(t, "memory_full_within", rule.memory_full_within,
             [&](const toml::node& n) { return r.seconds(n, prefix + "memory_full_within", 1s); });
    read_key(t, "memory_window", rule.memory_window,
             [&](const toml::node& n) { return r.seconds(n, prefix + "memory_window", 1s); });
    read_key(t, "cooldown", rule.cooldown, [&](const toml::node& n) { return r.seconds(n, prefix + "cooldown", 0s); });
    read_key(t, "max_dumps", rule.max_dumps,
             [&](const toml::node& n) { return r.integer(n, prefix + "max_dumps", 0, 1'000'000); });
    read_key(t, "live", rule.live, [&](const toml::node& n) { return r.boolean(n, prefix + "live"); });
    read_key(t, "action", rule.action, [&](const toml::node& n) -> std::optional<rule_action> {
        auto a = r.string(n, prefix + "action");
        if (!a) return std::nullopt;
        if (*a == "dump") return rule_action::dump;
        if (*a == "sample") return rule_action::sample;
        r.error(n.source(), prefix + "action is \"dump\" or \"sample\", not \"" + *a + "\"");
        return std::nullopt;
    });
    read_key(t, "sample_interval", rule.sample_interval,
             [&](const toml::node& n) { return r.integer(n, prefix + "sample_interval", 0, 0x7fffffff); });
    read_key(t, "sample_depth", rule.sample_depth,
             [&](const toml::node& n) { return r.integer(n, prefix + "sample_depth", 1, 64); });
    for (const char* key : {"sample_interval", "sample_depth"})
        if (const toml::node* n = t.get(key); n != nullptr && rule.action != rule_action::sample)
            r.error(n->source(), prefix + key + " does nothing unless action = \"sample\"");

    // Settings of a threshold that is not there are a mistake, not a default.
    if (const toml::node* n = t.get("old_gen_collections"); n != nullptr && !t.contains("old_gen_percent"))
        r.error(n->source(), prefix + "old_gen_collections does nothing without old_gen_percent");
    if (const toml::node* n = t.get("gc_window"); n != nullptr && !t.contains("gc_time_percent"))
        r.error(n->source(), prefix + "gc_window does nothing without gc_time_percent");
    if (const toml::node* n = t.get("predict_window"); n != nullptr && !t.contains("predict_full_within"))
        r.error(n->source(), prefix + "predict_window does nothing without predict_full_within");
    if (const toml::node* n = t.get("memory_polls"); n != nullptr && !t.contains("memory_percent"))
        r.error(n->source(), prefix + "memory_polls does nothing without memory_percent");
    if (const toml::node* n = t.get("memory_window"); n != nullptr && !t.contains("memory_full_within"))
        r.error(n->source(), prefix + "memory_window does nothing without memory_full_within");
    if (!t.contains("every") && !t.contains("old_gen_percent") && !t.contains("gc_time_percent") &&
        !t.contains("predict_full_within") && !t.contains("memory_percent") && !t.contains("memory_full_within"))
        r.error(t.source(), prefix +
                                "no trigger: give every, old_gen_percent, gc_time_percent, predict_full_within, "
                                "memory_percent or memory_full_within");
    out.push_back(std::move(rule));
}

}  // namespace

void read_selector(config_reader& r, const toml::table& t, const std::string& prefix, jvm_selector& s) {
    read_key(t, "main_class", s.main_class, [&](const toml::node& n) -> std::optional<std::string> {
        auto glob = r.string(n, prefix + "main_class");
        if (glob && glob->empty()) {
            r.error(n.source(), prefix + "main_class must be a pattern, not \"\" (leave it out to match every JVM)");
            return std::nullopt;
        }
        return glob;
    });
    if (const toml::node* n = t.get("command")) {
        if (auto pattern = r.string(*n, prefix + "command")) {
            try {
                s.command_re.emplace(*pattern, std::regex::ECMAScript);
                s.command = *pattern;
            } catch (const std::regex_error& e) {
                r.error(n->source(), prefix + "command is not a valid regular expression: " + e.what());
            }
        }
    }
    if (const toml::node* n = t.get("user")) {
        if (const auto* uid = n->as_integer()) {
            if (uid->get() >= 0 && uid->get() <= 0xfffffffe)
                s.user = std::to_string(uid->get());
            else
                r.error(n->source(), prefix + "user must be a user name or a uid, not " + std::to_string(uid->get()));
        } else if (auto name = r.string(*n, prefix + "user")) {
            if (name->empty())
                r.error(n->source(), prefix + "user must name a user, not \"\"");
            else
                s.user = *name;
        }
    }
    // container = true/false: in one or not; container = "GLOB": in one of that name.
    if (const toml::node* n = t.get("container")) {
        if (n->is_string()) {
            if (auto glob = r.string(*n, prefix + "container")) s.container_name = *glob;
        } else if (auto b = r.boolean(*n, prefix + "container")) {
            s.container = *b;
        }
    }
    read_key(t, "pod", s.pod, [&](const toml::node& n) { return r.string(n, prefix + "pod"); });
    read_key(t, "namespace", s.pod_namespace, [&](const toml::node& n) { return r.string(n, prefix + "namespace"); });
}

void read_rules(config_reader& r, const toml::node& rules, std::vector<dump_rule>& out) {
    const toml::array* a = rules.as_array();
    if (a == nullptr) {
        r.error(rules.source(), "rule must be an array of tables: write each rule as [[rule]], not " +
                                    std::string(type_phrase(rules.type())));
        return;
    }
    std::map<std::string, int> names;
    for (const toml::node& element : *a) {
        if (const toml::table* t = element.as_table())
            read_rule(r, *t, names, out);
        else
            r.error(element.source(),
                    "each rule must be a table ([[rule]]), not " + std::string(type_phrase(element.type())));
    }
}

}  // namespace heapd::daemon
