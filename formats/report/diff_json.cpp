// A diff of two dumps as JSON, both ways (formats/report/report_json.h).
#include "formats/report/report_json.h"

namespace heapd {
inline namespace report {
namespace {

nlohmann::ordered_json diff_side_json(const diff_side& s, bool retained) {
    nlohmann::ordered_json j = {{"file", s.file},       {"timestamp_ms", s.timestamp_ms},   {"layout", s.layout},
                                {"objects", s.objects}, {"shallow_bytes", s.shallow_bytes}, {"classes", s.classes}};
    if (retained) {
        j["reachable_objects"] = s.reachable_objects;
        j["reachable_bytes"] = s.reachable_bytes;
    }
    return j;
}

nlohmann::ordered_json class_diff_json(const std::vector<class_diff_entry>& rows, bool retained) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const class_diff_entry& e : rows) {
        nlohmann::ordered_json j = {{"class", e.class_name},
                                    {"status", e.added     ? "new"
                                               : e.removed ? "gone"
                                                           : "changed"},
                                    {"instances_before", e.instances_before},
                                    {"instances_after", e.instances_after},
                                    {"instances_delta", e.instances_delta},
                                    {"shallow_bytes_before", e.shallow_before},
                                    {"shallow_bytes_after", e.shallow_after},
                                    {"shallow_bytes_delta", e.shallow_delta}};
        if (retained) {
            j["retained_bytes_before"] = e.retained_before;
            j["retained_bytes_after"] = e.retained_after;
            j["retained_bytes_delta"] = e.retained_delta;
        }
        out.push_back(std::move(j));
    }
    return out;
}

diff_side diff_side_from_json(const nlohmann::ordered_json& j) {
    diff_side s;
    s.file = j.at("file").get<std::string>();
    s.timestamp_ms = j.at("timestamp_ms").get<std::uint64_t>();
    s.layout = j.at("layout").get<std::string>();
    s.objects = j.at("objects").get<std::uint64_t>();
    s.shallow_bytes = j.at("shallow_bytes").get<std::uint64_t>();
    s.classes = j.at("classes").get<std::uint64_t>();
    s.reachable_objects = j.value("reachable_objects", std::uint64_t{0});
    s.reachable_bytes = j.value("reachable_bytes", std::uint64_t{0});
    return s;
}

std::vector<class_diff_entry> class_diff_from_json(const nlohmann::ordered_json& rows) {
    std::vector<class_diff_entry> out;
    for (const auto& j : rows) {
        class_diff_entry e;
        e.class_name = j.at("class").get<std::string>();
        const std::string status = j.at("status").get<std::string>();
        e.added = status == "new";
        e.removed = status == "gone";
        e.instances_before = j.at("instances_before").get<std::uint64_t>();
        e.instances_after = j.at("instances_after").get<std::uint64_t>();
        e.instances_delta = j.at("instances_delta").get<std::int64_t>();
        e.shallow_before = j.at("shallow_bytes_before").get<std::uint64_t>();
        e.shallow_after = j.at("shallow_bytes_after").get<std::uint64_t>();
        e.shallow_delta = j.at("shallow_bytes_delta").get<std::int64_t>();
        e.retained_before = j.value("retained_bytes_before", std::uint64_t{0});
        e.retained_after = j.value("retained_bytes_after", std::uint64_t{0});
        e.retained_delta = j.value("retained_bytes_delta", std::int64_t{0});
        out.push_back(std::move(e));
    }
    return out;
}

}  // namespace

result<diff_report> diff_from_json(const nlohmann::ordered_json& j) {
    diff_report r;
    try {
        r.before = diff_side_from_json(j.at("before"));
        r.after = diff_side_from_json(j.at("after"));
        r.retained = j.at("retained").get<bool>();
        r.grew_classes = j.at("grew_classes").get<std::uint64_t>();
        r.shrank_classes = j.at("shrank_classes").get<std::uint64_t>();
        r.unchanged_classes = j.at("unchanged_classes").get<std::uint64_t>();
        r.grew = class_diff_from_json(j.at("grew"));
        r.shrank = class_diff_from_json(j.at("shrank"));
        r.notes = j.at("notes").get<std::vector<std::string>>();
    } catch (const std::exception& e) {
        return fail(error_code::bad_value, std::string("diff: ") + e.what());
    }
    return r;
}

nlohmann::ordered_json to_json(const diff_report& r) {
    return {{"before", diff_side_json(r.before, r.retained)},
            {"after", diff_side_json(r.after, r.retained)},
            {"retained", r.retained},
            {"grew_classes", r.grew_classes},
            {"shrank_classes", r.shrank_classes},
            {"unchanged_classes", r.unchanged_classes},
            {"grew", class_diff_json(r.grew, r.retained)},
            {"shrank", class_diff_json(r.shrank, r.retained)},
            {"notes", r.notes}};
}

}  // namespace report
}  // namespace heapd
