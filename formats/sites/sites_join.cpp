#include "formats/sites/sites_join.h"

#include <algorithm>
#include <map>
#include <string_view>

#include "formats/sites/site_ranking.h"

namespace heapd::sites {
namespace {

bool jdk_frame(std::string_view frame) {
    for (std::string_view prefix : {"java.", "javax.", "jdk.", "sun.", "com.sun."})
        if (frame.starts_with(prefix)) return true;
    return false;
}

// Sites of one class by live bytes: frames as text, and the class's live total.
struct class_sites {
    double live_bytes = 0;
    std::vector<const profile_site*> sites;
};

}  // namespace

std::string origin_frame(const std::vector<std::string>& frames) {
    for (const std::string& f : frames)
        if (!jdk_frame(f)) return f;
    return frames.empty() ? std::string("(no frames)") : frames.front();
}

void join_allocation_sites(analysis_report& report, const allocation_profile& profile, const join_options& options) {
    if (!profile.has_tables) return;
    report.allocations = {true, profile.agent_version, profile.interval, profile.seconds, profile.samples};
    std::map<std::string, class_sites, std::less<>> by_class;
    for (const profile_site& s : profile.sites) {
        if (s.live_bytes <= 0) continue;
        class_sites& c = by_class[profile.classes[s.klass]];
        c.live_bytes += s.live_bytes;
        c.sites.push_back(&s);
    }
    for (auto& [name, c] : by_class)
        std::stable_sort(c.sites.begin(), c.sites.end(),
                         [](const profile_site* a, const profile_site* b) { return a->live_bytes > b->live_bytes; });

    for (leak_suspect& suspect : report.retention.leak_suspects) {
        suspect.allocated_at.clear();
        std::vector<std::string> classes;
        if (suspect.is_class) classes.push_back(suspect.suspect.class_name);
        for (std::size_t i = 0; i < suspect.accumulated.size() && i < options.classes_per_suspect; ++i)
            classes.push_back(suspect.accumulated[i].class_name);
        for (const std::string& name : classes) {
            auto it = by_class.find(name);
            if (it == by_class.end()) continue;
            unsigned shown = 0;
            for (const profile_site* s : it->second.sites) {
                const double share = s->live_bytes / it->second.live_bytes;
                if (shown == options.sites_per_class || share < options.min_share) break;
                allocation_site_entry e;
                e.class_name = name;
                for (const profile_frame& f : s->frames) e.frames.push_back(frame_text(profile.methods, f));
                e.origin = origin_frame(e.frames);
                e.live_bytes = static_cast<std::uint64_t>(s->live_bytes + 0.5);
                e.live_objects = static_cast<std::uint64_t>(s->live_objects + 0.5);
                e.share = share;
                suspect.allocated_at.push_back(std::move(e));
                ++shown;
            }
        }
    }
}

}  // namespace heapd::sites
