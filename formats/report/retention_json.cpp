// The retention parts of a report as JSON, both ways (declared in report_json.h): reachability,
// leak suspects, LeakCanary's watched objects, dominators, retained by class, the tree.
#include <string>
#include <vector>

#include "formats/report/report_json.h"

namespace heapd {
inline namespace report {
namespace {

using json = nlohmann::ordered_json;

json groups_json(const std::vector<accumulated_class>& groups) {
    json a = json::array();
    for (const auto& g : groups)
        a.push_back({{"class", g.class_name}, {"count", g.count}, {"retained_bytes", g.retained_bytes}});
    return a;
}

std::vector<accumulated_class> accumulated_from_json(const json& a) {
    std::vector<accumulated_class> out;
    for (const json& g : a)
        out.push_back({g.at("class").get<std::string>(), g.at("count").get<std::uint64_t>(),
                       g.at("retained_bytes").get<std::uint64_t>()});
    return out;
}

json entry_json(const dominator_entry& d) {
    return {{"id", d.id},
            {"class", d.class_name},
            {"shallow_bytes", d.shallow_bytes},
            {"retained_bytes", d.retained_bytes}};
}

dominator_entry entry_from_json(const json& d) {
    return {d.at("id").get<std::uint64_t>(), d.at("class").get<std::string>(),
            d.at("shallow_bytes").get<std::uint64_t>(), d.at("retained_bytes").get<std::uint64_t>()};
}

json watched_json(const std::vector<watched_object>& watched) {
    json out = json::array();
    for (const watched_object& w : watched) {
        json e = {{"key", w.key},
                  {"description", w.description},
                  {"object", entry_json(w.object)},
                  {"reachable", w.reachable},
                  {"only_binder_held", w.only_binder_held}};
        if (w.reachable) e["path"] = path_json(w.path);
        out.push_back(std::move(e));
    }
    return out;
}

std::vector<watched_object> watched_from_json(const json& j) {
    std::vector<watched_object> out;
    for (const json& e : j) {
        watched_object w;
        w.key = e.at("key").get<std::string>();
        w.description = e.at("description").get<std::string>();
        w.object = entry_from_json(e.at("object"));
        w.reachable = e.at("reachable").get<bool>();
        w.only_binder_held = e.value("only_binder_held", false);
        if (e.contains("path")) w.path = path_from_json(e.at("path"));
        out.push_back(std::move(w));
    }
    return out;
}

json suspects_json(const retention_report& t) {
    json list = json::array();
    for (const leak_suspect& s : t.leak_suspects) {
        json e = {{"kind", s.is_class ? "class" : "object"}};
        if (s.is_class) {
            e["class"] = s.suspect.class_name;
            e["instances"] = s.instances;
            e["biggest"] = entry_json(s.suspect);
        } else {
            e["object"] = entry_json(s.suspect);
        }
        e["retained_bytes"] = s.retained_bytes;
        e["share"] = s.share;
        json acc = entry_json(s.accumulation);
        acc["chain_length"] = s.chain_length;
        e["accumulation_point"] = acc;
        e["accumulated"] = groups_json(s.accumulated);
        if (s.is_class) {
            e["held_by"] = groups_json(s.held_by);
            json biggest = json::array();
            for (const dominator_entry& b : s.biggest) biggest.push_back(entry_json(b));
            e["biggest_instances"] = std::move(biggest);
        }
        e["path"] = path_json(s.path);
        if (!s.allocated_at.empty()) {
            json sites = json::array();
            for (const allocation_site_entry& a : s.allocated_at)
                sites.push_back({{"class", a.class_name},
                                 {"origin", a.origin},
                                 {"frames", a.frames},
                                 {"live_bytes", a.live_bytes},
                                 {"live_objects", a.live_objects},
                                 {"share", a.share}});
            e["allocated_at"] = std::move(sites);
        }
        list.push_back(std::move(e));
    }
    return {{"threshold", t.suspect_threshold}, {"suspects", list}};
}

void suspects_from_json(const json& j, retention_report& t) {
    t.suspect_threshold = j.at("threshold").get<double>();
    for (const json& e : j.at("suspects")) {
        leak_suspect s;
        s.is_class = e.at("kind").get<std::string>() == "class";
        if (s.is_class) {
            s.suspect = entry_from_json(e.at("biggest"));
            s.suspect.class_name = e.at("class").get<std::string>();
            s.instances = e.at("instances").get<std::uint64_t>();
            s.held_by = accumulated_from_json(e.at("held_by"));
            if (e.contains("biggest_instances"))
                for (const json& b : e.at("biggest_instances")) s.biggest.push_back(entry_from_json(b));
        } else {
            s.suspect = entry_from_json(e.at("object"));
            s.instances = 1;
        }
        s.retained_bytes = e.at("retained_bytes").get<std::uint64_t>();
        s.share = e.at("share").get<double>();
        s.accumulation = entry_from_json(e.at("accumulation_point"));
        s.chain_length = e.at("accumulation_point").at("chain_length").get<std::uint64_t>();
        s.accumulated = accumulated_from_json(e.at("accumulated"));
        s.path = path_from_json(e.at("path"));
        if (e.contains("allocated_at"))
            for (const json& a : e.at("allocated_at"))
                s.allocated_at.push_back({a.at("class").get<std::string>(), a.at("origin").get<std::string>(),
                                          a.at("frames").get<std::vector<std::string>>(),
                                          a.at("live_bytes").get<std::uint64_t>(),
                                          a.at("live_objects").get<std::uint64_t>(), a.at("share").get<double>()});
        t.leak_suspects.push_back(std::move(s));
    }
}

}  // namespace

// The retention parts of a report: reachability, suspects, dominators, retained by class, the tree.
void retention_json(const retention_report& t, nlohmann::ordered_json& out) {
    json dominators = json::array(), by_class = json::array();
    for (const auto& d : t.dominators)
        dominators.push_back({{"id", d.id},
                              {"class", d.class_name},
                              {"shallow_bytes", d.shallow_bytes},
                              {"retained_bytes", d.retained_bytes}});
    for (const auto& c : t.retained_by_class)
        by_class.push_back({{"class", c.class_name}, {"retained_bytes", c.retained_bytes}});
    out["reachability"] = {{"reachable_objects", t.reachable_objects},
                           {"reachable_bytes", t.reachable_bytes},
                           {"unreachable_objects", t.unreachable_objects},
                           {"unreachable_bytes", t.unreachable_bytes},
                           {"filler_objects", t.filler_objects},
                           {"filler_bytes", t.filler_bytes},
                           {"root_objects", t.root_objects}};
    if (t.focus_bytes != 0) out["reachability"]["focus_bytes"] = t.focus_bytes;
    out["leak_suspects"] = suspects_json(t);
    if (!t.watched.empty()) out["watched_objects"] = watched_json(t.watched);
    out["dominators"] = dominators;
    out["retained_by_class"] = by_class;
    if (!t.tree.empty()) out["dominator_tree"] = tree_json(t);
}

// Throws json::exception on a missing or mistyped field, like the rest of report_from_json.
result<void> retention_from_json(const nlohmann::ordered_json& j, retention_report& t) {
    t.computed = true;
    const json& reach = j.at("reachability");
    t.reachable_objects = reach.at("reachable_objects").get<std::uint64_t>();
    t.reachable_bytes = reach.at("reachable_bytes").get<std::uint64_t>();
    t.unreachable_objects = reach.at("unreachable_objects").get<std::uint64_t>();
    t.unreachable_bytes = reach.at("unreachable_bytes").get<std::uint64_t>();
    t.filler_objects = reach.value("filler_objects", std::uint64_t{0});
    t.filler_bytes = reach.value("filler_bytes", std::uint64_t{0});
    t.root_objects = reach.value("root_objects", std::uint64_t{0});
    t.focus_bytes = reach.value("focus_bytes", std::uint64_t{0});
    for (const json& d : j.at("dominators"))
        t.dominators.push_back({d.at("id").get<std::uint64_t>(), d.at("class").get<std::string>(),
                                d.at("shallow_bytes").get<std::uint64_t>(),
                                d.at("retained_bytes").get<std::uint64_t>()});
    for (const json& c : j.at("retained_by_class"))
        t.retained_by_class.push_back({c.at("class").get<std::string>(), c.at("retained_bytes").get<std::uint64_t>()});
    if (j.contains("leak_suspects")) suspects_from_json(j.at("leak_suspects"), t);
    if (j.contains("watched_objects")) t.watched = watched_from_json(j.at("watched_objects"));
    if (j.contains("dominator_tree")) return tree_from_json(j.at("dominator_tree"), t);
    return {};
}

}  // namespace report
}  // namespace heapd
