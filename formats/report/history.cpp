#include "formats/report/history.h"

namespace heapd {
inline namespace report {

history_point history_point_of(const analysis_report& r, std::string label, std::int64_t time_ms, std::string trigger) {
    history_point p{std::move(label), time_ms, std::move(trigger), 0, {}};
    p.heap_bytes = r.retention.computed ? r.retention.reachable_bytes : r.summary.shallow_bytes;
    for (const leak_suspect& s : r.retention.leak_suspects) {
        if (p.suspects.size() == history_suspects) break;
        p.suspects.emplace_back(s.is_class ? "all " + s.suspect.class_name : s.suspect.class_name, s.retained_bytes);
    }
    return p;
}

nlohmann::ordered_json to_json(const std::vector<history_point>& points) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const history_point& p : points) {
        nlohmann::ordered_json suspects = nlohmann::ordered_json::array();
        for (const auto& [name, bytes] : p.suspects) suspects.push_back({{"name", name}, {"retained_bytes", bytes}});
        out.push_back({{"dump", p.label},
                       {"time_ms", p.time_ms},
                       {"trigger", p.trigger},
                       {"heap_bytes", p.heap_bytes},
                       {"suspects", std::move(suspects)}});
    }
    return out;
}

result<std::vector<history_point>> history_from_json(const nlohmann::ordered_json& j) {
    std::vector<history_point> out;
    try {
        for (const auto& e : j) {
            history_point p{e.at("dump").get<std::string>(),
                            e.at("time_ms").get<std::int64_t>(),
                            e.at("trigger").get<std::string>(),
                            e.at("heap_bytes").get<std::uint64_t>(),
                            {}};
            for (const auto& s : e.at("suspects"))
                p.suspects.emplace_back(s.at("name").get<std::string>(), s.at("retained_bytes").get<std::uint64_t>());
            out.push_back(std::move(p));
        }
    } catch (const nlohmann::ordered_json::exception& e) {
        return fail(error_code::bad_value, std::string("history JSON: ") + e.what());
    }
    return out;
}

}  // namespace report
}  // namespace heapd
