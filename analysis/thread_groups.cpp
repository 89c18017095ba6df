#include "analysis/thread_groups.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace heapd {
inline namespace analysis {
namespace {

constexpr std::size_t kept_frames = 8;

// Groups in a map by key, then by count descending (ties by key), cut to max.
std::vector<thread_group> ranked(std::map<std::string, thread_group>& groups, unsigned max) {
    std::vector<thread_group> out;
    out.reserve(groups.size());
    for (auto& [key, g] : groups) out.push_back(std::move(g));
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.count > b.count; });
    if (out.size() > max) out.resize(max);
    return out;
}

void add(std::map<std::string, thread_group>& groups, const std::string& key, const thread_report& t) {
    thread_group& g = groups[key];
    if (g.count++ == 0) {
        g.key = key;
        g.example = t.name;
        g.frames.assign(t.frames.begin(), t.frames.begin() + std::min(t.frames.size(), kept_frames));
    }
}

std::string joined(const std::vector<std::string>& frames) {
    std::string out;
    for (const std::string& f : frames) (out += f) += '\n';
    return out;
}

}  // namespace

std::string name_pattern(std::string_view name) {
    std::string out;
    for (std::size_t i = 0; i < name.size(); ++i) {
        if (std::isdigit(static_cast<unsigned char>(name[i])) == 0) {
            out += name[i];
            continue;
        }
        out += '#';
        while (i + 1 < name.size() && std::isdigit(static_cast<unsigned char>(name[i + 1])) != 0) ++i;
    }
    return out;
}

thread_summary_report group_threads(const std::vector<thread_report>& threads, unsigned max_groups) {
    thread_summary_report r;
    r.count = threads.size();
    std::map<std::string, std::uint64_t> states;
    std::map<std::string, thread_group> by_name;
    // Stacks compared whole; the key shown is the innermost frame and the outermost.
    std::map<std::string, thread_group> by_stack;
    for (const thread_report& t : threads) {
        if (t.daemon.value_or(false)) ++r.daemon;
        ++states[t.state.empty() ? "unknown" : t.state];
        add(by_name, name_pattern(t.name), t);
        add(by_stack, joined(t.frames), t);
    }
    for (auto& [stack, g] : by_stack) {
        if (g.frames.empty()) {
            g.key = "(no Java frames)";
            continue;
        }
        g.key = g.frames.front();
        const std::size_t end = stack.rfind('\n', stack.size() - 2);  // the outermost frame follows it
        if (end != std::string::npos) g.key += " \u2026 " + stack.substr(end + 1, stack.size() - end - 2);
    }
    r.by_name = ranked(by_name, max_groups);
    r.by_stack = ranked(by_stack, max_groups);
    r.states.assign(states.begin(), states.end());
    std::stable_sort(r.states.begin(), r.states.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    return r;
}

}  // namespace analysis
}  // namespace heapd
