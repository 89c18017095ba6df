#include "analysis/threads.h"

#include <algorithm>
#include <map>

#include "formats/hprof/java_names.h"
#include "formats/hprof/java_strings.h"
#include "formats/hprof/object_locator.h"

namespace heapd {
inline namespace analysis {

std::string format_frame(const record_index& idx, const frame_info& f) {
    std::string cls = "<unknown class>";
    if (const loaded_class* c = idx.class_by_serial(f.class_serial)) cls = java_class_name(idx.utf8(c->name_id));
    std::string out = cls + "." + std::string(idx.utf8(f.method_name_id)) + "(";
    std::string_view file = idx.utf8(f.source_file_id);
    if (f.line == -3)
        out += "Native Method";
    else if (f.line == -2)
        out += file.empty() ? "Compiled method" : std::string(file) + ":compiled";
    else if (file.empty() || f.line == -1)
        out += "Unknown Source";
    else if (f.line > 0)
        out += std::string(file) + ":" + std::to_string(f.line);
    else
        out += file;
    return out + ")";
}

std::string thread_state_name(std::uint32_t s) {
    constexpr std::uint32_t alive = 0x1, terminated = 0x2, runnable = 0x4, waiting_indefinitely = 0x10,
                            waiting_timeout = 0x20, blocked = 0x400;
    if (s & runnable) return "RUNNABLE";
    if (s & blocked) return "BLOCKED";
    if (s & waiting_indefinitely) return "WAITING";
    if (s & waiting_timeout) return "TIMED_WAITING";
    if (s & terminated) return "TERMINATED";
    if ((s & alive) == 0) return "NEW";
    return "RUNNABLE";
}

namespace {

std::vector<std::string> frames_of(const record_index& idx, std::uint32_t trace_serial) {
    std::vector<std::string> out;
    const trace_info* t = idx.trace(trace_serial);
    if (t == nullptr) return out;
    const unsigned id = idx.id_size();
    for (std::size_t i = 0; i + id <= t->frame_ids.size(); i += id) {
        const frame_info* f = idx.frame(be::id(t->frame_ids.data() + i, id));
        out.push_back(f ? format_frame(idx, *f) : "<missing frame>");
    }
    return out;
}

// Reads name, state and daemon flag from the Thread objects (JDK 19+ keep the last two in holder).
void read_thread_objects(const record_index& idx, const class_table& classes, std::vector<thread_entry>& threads,
                         bool read_names, strings_along* along, const record_finder& finder) {
    std::vector<std::uint64_t> ids;
    for (const auto& t : threads) ids.push_back(t.object_id);
    object_locator objects(idx, ids, finder);
    std::vector<std::uint64_t> next;  // names and holders
    std::map<std::uint64_t, std::uint64_t> name_of, holder_of;
    for (auto& t : threads) {
        const located_object* o = objects.find(t.object_id);
        if (o == nullptr || o->tag != 0x21) continue;
        if (auto name = read_names ? read_field(classes, o->instance, "name") : std::nullopt) {
            name_of[t.object_id] = *name;
            next.push_back(*name);
        }
        if (auto holder = read_field(classes, o->instance, "holder")) {
            holder_of[t.object_id] = *holder;
            next.push_back(*holder);
        }
        if (auto status = read_field(classes, o->instance, "threadStatus"))
            t.state = thread_state_name(static_cast<std::uint32_t>(*status));
        if (auto daemon = read_field(classes, o->instance, "daemon")) t.daemon = *daemon != 0;
    }
    if (along != nullptr) next.insert(next.end(), along->ids.begin(), along->ids.end());
    object_locator second(idx, next, finder);
    std::vector<std::uint64_t> values;
    std::map<std::uint64_t, string_fields> str_of;
    std::vector<std::optional<string_fields>> along_fields;
    if (along != nullptr)
        for (std::uint64_t id : along->ids) {
            const located_object* o = id != 0 ? second.find(id) : nullptr;
            along_fields.push_back(o != nullptr && o->tag == 0x21 ? read_string_fields(classes, o->instance)
                                                                  : std::nullopt);
            if (along_fields.back()) values.push_back(along_fields.back()->value_id);
        }
    for (auto& t : threads) {
        if (auto h = holder_of.find(t.object_id); h != holder_of.end())
            if (const located_object* o = second.find(h->second); o && o->tag == 0x21) {
                if (auto status = read_field(classes, o->instance, "threadStatus"))
                    t.state = thread_state_name(static_cast<std::uint32_t>(*status));
                if (auto daemon = read_field(classes, o->instance, "daemon")) t.daemon = *daemon != 0;
            }
        auto n = name_of.find(t.object_id);
        const located_object* o = n != name_of.end() ? second.find(n->second) : nullptr;
        if (o != nullptr && o->tag == 0x21) {
            if (auto s = read_string_fields(classes, o->instance)) {
                str_of[t.object_id] = *s;
                values.push_back(s->value_id);
            }
        } else if (o != nullptr && o->tag == 0x23) {
            t.name = decode_java_string(o->primitive_array, 0);  // JDK 6 and older: name is a char[]
        }
    }
    object_locator third(idx, values, finder);
    for (auto& t : threads) {
        auto s = str_of.find(t.object_id);
        if (s == str_of.end()) continue;
        if (const located_object* o = third.find(s->second.value_id); o && o->tag == 0x23)
            if (auto chars = string_chars(o->primitive_array, s->second))
                t.name = decode_java_string(*chars, s->second.coder);
    }
    if (along == nullptr) return;
    along->text.assign(along->ids.size(), {});
    for (std::size_t i = 0; i < along_fields.size(); ++i) {
        const located_object* o = along_fields[i] ? third.find(along_fields[i]->value_id) : nullptr;
        if (o != nullptr && o->tag == 0x23)
            if (auto chars = string_chars(o->primitive_array, *along_fields[i]))
                along->text[i] = decode_java_string(*chars, along_fields[i]->coder);
    }
}

}  // namespace

std::vector<thread_entry> collect_threads(const record_index& idx, const class_table& classes,
                                          const std::vector<root_view>& thread_roots, bool strings_stripped,
                                          strings_along* along, const record_finder& finder) {
    // Thread roots first; a START_THREAD of the same thread object (its serial may differ) joins it.
    std::vector<thread_entry> threads;
    std::vector<std::uint32_t> traces;
    std::map<std::uint64_t, std::size_t> by_object;
    for (const root_view& r : thread_roots) {
        if (r.object_id != 0) {
            if (by_object.contains(r.object_id)) continue;
            by_object[r.object_id] = threads.size();
        }
        threads.push_back({r.thread_serial, r.object_id, {}, {}, std::nullopt, {}});
        traces.push_back(r.trace_serial);
    }
    for (const started_thread& s : idx.started_threads()) {
        auto it = s.object_id != 0 ? by_object.find(s.object_id) : by_object.end();
        if (it == by_object.end()) {
            threads.push_back({s.serial, s.object_id, {}, {}, std::nullopt, {}});
            traces.push_back(s.trace_serial);
            if (s.object_id != 0) by_object.emplace(s.object_id, threads.size() - 1);
            threads.back().name = std::string(idx.utf8(s.name_id));
            continue;
        }
        threads[it->second].name = std::string(idx.utf8(s.name_id));
    }
    for (std::size_t i = 0; i < threads.size(); ++i) threads[i].frames = frames_of(idx, traces[i]);
    read_thread_objects(idx, classes, threads, !strings_stripped, along, finder);
    for (auto& t : threads)
        if (t.name.empty())
            t.name = "<thread " + std::to_string(t.serial) + (strings_stripped ? ", name stripped>" : ">");
    return threads;
}

}  // namespace analysis
}  // namespace heapd
