#include "daemon/rules/heap_outlook.h"

namespace heapd::daemon {

wire::json to_json(const heap_outlook& o) {
    wire::json j = {{"watched", o.watched}};
    if (!o.watched) {
        j["note"] = o.note;
        return j;
    }
    if (!o.note.empty()) j["note"] = o.note;
    j["collector"] = std::string(name_of(o.collector));
    j["measured"] = std::string(measured_space(o.collector));
    if (o.latest)
        j["after_gc"] = {{"used", o.latest->used},
                         {"max", o.latest->max},
                         {"percent", o.latest->percent()},
                         {"at_ms", o.latest_ms},
                         {"full", o.latest->full}};
    if (o.collector == collector_family::serial || o.collector == collector_family::parallel)
        j["young_measures"] = o.young_measures;
    j["trend"] = o.state == trend_state::rising ? "rising" : o.state == trend_state::steady ? "steady" : "learning";
    j["window_seconds"] = o.window.count();
    if (o.state == trend_state::rising) {
        j["predicted_full_seconds"] = o.prediction.seconds_to_full;
        j["growth_bytes_per_second"] = o.prediction.bytes_per_second;
        j["floor_percent"] = o.prediction.floor_percent;
    }
    return j;
}

}  // namespace heapd::daemon
