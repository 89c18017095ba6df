// The dominator tree outline of a report as JSON, both ways (declared in report_json.h).
#include <string>

#include "formats/report/report_json.h"

namespace heapd {
inline namespace report {

nlohmann::ordered_json tree_json(const retention_report& t) {
    nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
    for (const tree_node& n : t.tree) {
        nlohmann::ordered_json e;
        if (n.others == 0) e["id"] = n.id;
        if (n.others == 0 || !n.class_name.empty()) e["class"] = n.class_name;
        e["shallow_bytes"] = n.shallow_bytes;
        e["retained_bytes"] = n.retained_bytes;
        e["parent"] = n.parent;
        if (n.others != 0) e["others"] = n.others;
        nodes.push_back(std::move(e));
    }
    return {{"min_share", t.tree_min_share}, {"nodes", std::move(nodes)}};
}

result<void> tree_from_json(const nlohmann::ordered_json& j, retention_report& t) {
    t.tree_min_share = j.at("min_share").get<double>();
    for (const auto& e : j.at("nodes")) {
        tree_node n;
        n.others = e.value("others", std::uint64_t{0});
        if (n.others == 0) {
            n.id = e.at("id").get<std::uint64_t>();
            n.class_name = e.at("class").get<std::string>();
        } else {
            n.class_name = e.value("class", std::string());
        }
        n.shallow_bytes = e.at("shallow_bytes").get<std::uint64_t>();
        n.retained_bytes = e.at("retained_bytes").get<std::uint64_t>();
        n.parent = e.at("parent").get<std::int64_t>();
        // Parents come first: a picture walks the list once.
        if (n.parent < -1 || n.parent >= static_cast<std::int64_t>(t.tree.size()) ||
            (n.parent >= 0 && t.tree[static_cast<std::size_t>(n.parent)].others != 0))
            return fail(error_code::bad_value, "report JSON: dominator_tree node " + std::to_string(t.tree.size()) +
                                                   " names parent " + std::to_string(n.parent) +
                                                   ", not an object before it");
        t.tree.push_back(std::move(n));
    }
    return {};
}

}  // namespace report
}  // namespace heapd
