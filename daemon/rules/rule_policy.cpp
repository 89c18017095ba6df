#include "daemon/rules/rule_policy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "daemon/config/config_values.h"
#include "formats/report/quantities.h"

namespace heapd::daemon {
namespace {}  // namespace

std::string byte_rate_words(double bytes_per_second) {
    const double per_minute = std::max(0.0, bytes_per_second * 60);
    return text::human_bytes(static_cast<std::uint64_t>(std::llround(std::min(per_minute, 1e18)))) + "/min";
}

std::optional<std::string> rule_policy::old_gen_reason(const dump_rule& rule, state& st, const jvm_sample& s) {
    if (!rule.old_gen_percent) return std::nullopt;
    if (s.measured && s.measured->max > 0) {
        st.last_occupancy = s.measured->percent();
        st.streak = st.last_occupancy > *rule.old_gen_percent ? st.streak + 1 : 0;
    }
    const unsigned needed = std::max(rule.old_gen_collections, 1u);
    if (st.streak < needed) return std::nullopt;
    return std::string(measured_space(s.collector)) + " " + text::round_percent(st.last_occupancy) +
           " full after collections, " + std::to_string(st.streak) + " measurement" + (st.streak == 1 ? "" : "s") +
           " in a row (threshold " + text::round_percent(*rule.old_gen_percent) + ")";
}

std::optional<std::string> rule_policy::predict_reason(const dump_rule& rule, const jvm_sample& s) {
    if (!rule.predict_full_within || s.trend == nullptr) return std::nullopt;
    full_prediction p;
    if (s.trend->predict(static_cast<double>(rule.predict_window.count()), p) != trend_state::rising)
        return std::nullopt;
    if (p.seconds_to_full > static_cast<double>(rule.predict_full_within->count())) return std::nullopt;
    auto secs = [](double d) { return std::chrono::seconds(std::llround(d)); };
    return std::string(measured_space(s.collector)) + " full in about " + duration_string(secs(p.seconds_to_full)) +
           ": what collections leave rose steadily over " + duration_string(secs(p.span_seconds)) + " to " +
           text::round_percent(p.floor_percent) + ", " + byte_rate_words(p.bytes_per_second) + " (threshold " +
           duration_string(*rule.predict_full_within) + ")";
}

std::optional<std::string> rule_policy::memory_reason(const dump_rule& rule, state& st, const jvm_sample& s) {
    if (!rule.memory_percent || !s.resident || !s.memory_limit || *s.memory_limit <= 0) return std::nullopt;
    const double percent = 100.0 * static_cast<double>(*s.resident) / static_cast<double>(*s.memory_limit);
    st.memory_streak = percent > *rule.memory_percent ? st.memory_streak + 1 : 0;
    if (st.memory_streak < std::max(rule.memory_polls, 1u)) return std::nullopt;
    return "resident memory " + text::round_percent(percent) + " of its limit (" +
           text::human_bytes(static_cast<std::uint64_t>(*s.resident)) + " of " +
           text::human_bytes(static_cast<std::uint64_t>(*s.memory_limit)) + ", " + s.limit_source + "), " +
           std::to_string(st.memory_streak) + " poll" + (st.memory_streak == 1 ? "" : "s") + " in a row (threshold " +
           text::round_percent(*rule.memory_percent) + ")";
}

std::optional<std::string> rule_policy::memory_trend_reason(const dump_rule& rule, const jvm_sample& s) {
    if (!rule.memory_full_within || s.memory_trend == nullptr || !s.memory_limit) return std::nullopt;
    full_prediction p;
    if (s.memory_trend->predict(static_cast<double>(rule.memory_window.count()), p) != trend_state::rising)
        return std::nullopt;
    if (p.seconds_to_full > static_cast<double>(rule.memory_full_within->count())) return std::nullopt;
    auto secs = [](double d) { return std::chrono::seconds(std::llround(d)); };
    return "resident memory at its limit (" + text::human_bytes(static_cast<std::uint64_t>(*s.memory_limit)) + ", " +
           s.limit_source + ") in about " + duration_string(secs(p.seconds_to_full)) + ": it rose steadily over " +
           duration_string(secs(p.span_seconds)) + " to " + text::round_percent(p.floor_percent) + ", " +
           byte_rate_words(p.bytes_per_second) + " (threshold " + duration_string(*rule.memory_full_within) + ")";
}

std::optional<std::string> rule_policy::gc_time_reason(const dump_rule& rule, state& st, const jvm_sample& s) {
    if (!rule.gc_time_percent || s.hrt_frequency <= 0) return std::nullopt;
    auto& w = st.window;
    if (!w.empty() && (s.hrt_ticks < w.back().hrt_ticks || s.gc_ticks < w.back().gc_ticks)) w.clear();
    if (!w.empty() && s.hrt_ticks == w.back().hrt_ticks)
        w.back().gc_ticks = s.gc_ticks;
    else
        w.push_back({s.gc_ticks, s.hrt_ticks});
    // The latest point at least gc_window (and at least one tick) before the newest; older ones go.
    const double window_ticks =
        std::max(1.0, static_cast<double>(rule.gc_window.count()) * static_cast<double>(s.hrt_frequency));
    std::optional<std::size_t> base;
    for (std::size_t i = w.size(); i-- > 0;)
        if (static_cast<double>(w.back().hrt_ticks - w[i].hrt_ticks) >= window_ticks) {
            base = i;
            break;
        }
    if (base) w.erase(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(*base));
    thin_evenly(w, max_window_samples, [](const gc_point& p) { return p.hrt_ticks; });
    if (!base || w.size() < 2) return std::nullopt;
    const double span = static_cast<double>(w.back().hrt_ticks - w.front().hrt_ticks);
    // The collectors' time is counted when a collection ends, the clock sampled every 50 ms or so:
    // a share a little above 100% is 100%.
    const double share = std::min(100.0, static_cast<double>(w.back().gc_ticks - w.front().gc_ticks) / span * 100);
    if (!(share > *rule.gc_time_percent)) return std::nullopt;
    const auto seconds = static_cast<long long>(std::llround(span / static_cast<double>(s.hrt_frequency)));
    return "GC took " + text::round_percent(share) + " of the last " + duration_string(std::chrono::seconds(seconds)) +
           " (threshold " + text::round_percent(*rule.gc_time_percent) + ")";
}

std::optional<std::string> rule_policy::observe(const dump_rule& rule, const jvm_identity& id, const jvm_sample& s) {
    auto [it, fresh] = states_[rule.name].try_emplace(id);
    state& st = it->second;
    if (fresh) st.first_seen = s.at;

    std::vector<std::string> reasons;
    if (rule.every) {
        const auto anchor = st.last_dump.value_or(st.first_seen);
        if (s.at - anchor >= *rule.every) reasons.push_back("scheduled every " + duration_string(*rule.every));
    }
    if (auto r = old_gen_reason(rule, st, s)) reasons.push_back(std::move(*r));
    if (auto r = gc_time_reason(rule, st, s)) reasons.push_back(std::move(*r));
    if (auto r = predict_reason(rule, s)) reasons.push_back(std::move(*r));
    if (auto r = memory_reason(rule, st, s)) reasons.push_back(std::move(*r));
    if (auto r = memory_trend_reason(rule, s)) reasons.push_back(std::move(*r));

    if (reasons.empty()) return std::nullopt;
    if (rule.max_dumps != 0 && st.dumps >= rule.max_dumps) return std::nullopt;
    if (st.last_attempt && s.at - *st.last_attempt < rule.cooldown) return std::nullopt;
    std::string joined;
    for (const std::string& r : reasons) joined += (joined.empty() ? "" : "; ") + r;
    return joined;
}

void rule_policy::record(const std::string& rule, const jvm_identity& id, dump_outcome outcome,
                         policy_clock::time_point at) {
    auto r = states_.find(rule);
    if (r == states_.end() || outcome == dump_outcome::busy) return;
    auto it = r->second.find(id);
    if (it == r->second.end()) return;
    state& st = it->second;
    st.last_attempt = at;
    if (outcome != dump_outcome::submitted) return;
    st.last_dump = at;
    ++st.dumps;
    st.streak = 0;
    st.memory_streak = 0;
    if (st.window.size() > 1) st.window.erase(st.window.begin(), st.window.end() - 1);
}

void rule_policy::retain_rules(const std::vector<dump_rule>& rules) {
    std::set<std::string> names;
    for (const dump_rule& r : rules) names.insert(r.name);
    std::erase_if(states_, [&](const auto& kv) { return !names.contains(kv.first); });
}

void rule_policy::retain_jvms(const std::set<jvm_identity>& alive) {
    for (auto& [name, jvms] : states_) std::erase_if(jvms, [&](const auto& kv) { return !alive.contains(kv.first); });
}

unsigned rule_policy::dumps(const std::string& rule, const jvm_identity& id) const {
    auto r = states_.find(rule);
    if (r == states_.end()) return 0;
    auto it = r->second.find(id);
    return it == r->second.end() ? 0 : it->second.dumps;
}

std::size_t rule_policy::tracked() const {
    std::size_t n = 0;
    for (const auto& [name, jvms] : states_) n += jvms.size();
    return n;
}

std::size_t rule_policy::window_samples() const {
    std::size_t n = 0;
    for (const auto& [name, jvms] : states_)
        for (const auto& [id, st] : jvms) n += st.window.size();
    return n;
}

}  // namespace heapd::daemon
