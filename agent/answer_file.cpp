#include "agent/answer_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "agent/json_text.h"

namespace heapd::agent {
namespace {

void append_number(std::string& out, double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    out += buf;
}

void append_number(std::string& out, std::uint64_t v) { out += std::to_string(v); }
void append_number(std::string& out, std::int64_t v) { out += std::to_string(v); }

// ,"key":value
template <typename T>
void append_field(std::string& out, const char* key, T value) {
    out += ",\"";
    out += key;
    out += "\":";
    if constexpr (std::is_same_v<T, bool>)
        out += value ? "true" : "false";
    else
        append_number(out, value);
}

// "key":
void append_key(std::string& out, const char* key) {
    out += '"';
    out += key;
    out += "\":";
}

void append_methods(std::string& out, const std::vector<method_info>& methods) {
    for (std::size_t i = 0; i < methods.size(); ++i) {
        const method_info& m = methods[i];
        out += i ? ",{" : "{";
        append_key(out, "class");
        append_string(out, m.klass);
        out += ',';
        append_key(out, "name");
        append_string(out, m.name);
        out += ',';
        append_key(out, "descriptor");
        append_string(out, m.descriptor);
        out += ',';
        append_key(out, "file");
        append_string(out, m.file);
        out += '}';
    }
}

void append_frames(std::string& out, const std::vector<site_frame>& frames) {
    out += "\"frames\":[";
    for (std::size_t f = 0; f < frames.size(); ++f) {
        out += f ? ",[" : "[";
        append_number(out, std::uint64_t{frames[f].method});
        out += ',';
        append_number(out, std::int64_t{frames[f].line});
        out += ']';
    }
    out += ']';
}

void append_cpu(std::string& out, const cpu_table& c) {
    append_field(out, "cpu_depth", std::int64_t{c.depth()});
    append_field(out, "cpu_ticks", c.ticks());
    append_field(out, "cpu_samples", c.samples());
    append_field(out, "cpu_dropped", c.dropped());
    out += ",\"cpu_methods\":[";
    append_methods(out, c.methods());
    out += "],\"cpu_traces\":[";
    for (std::size_t i = 0; i < c.traces().size(); ++i) {
        out += i ? ",{" : "{";
        append_frames(out, c.traces()[i].frames);
        append_field(out, "count", c.traces()[i].count);
        out += '}';
    }
    out += ']';
}

void append_tables(std::string& out, const site_table& t) {
    // Live estimates per site, from the objects still watched.
    std::vector<estimate> live(t.sites().size(), estimate{0, 0});
    std::vector<std::uint64_t> live_samples(t.sites().size(), 0);
    for (const live_sample& l : t.live()) {
        estimate e = estimate_of(l.size, t.interval());
        live[l.site].objects += e.objects;
        live[l.site].bytes += e.bytes;
        ++live_samples[l.site];
    }
    append_field(out, "samples", t.samples());
    append_field(out, "dropped_sites", t.dropped().sites);
    append_field(out, "dropped_live", t.dropped().live);
    append_field(out, "dropped_unnamed", t.dropped().classes);
    out += ",\"classes\":[";
    for (std::size_t i = 0; i < t.classes().size(); ++i) {
        if (i) out += ',';
        append_string(out, t.classes()[i]);
    }
    out += "],\"methods\":[";
    append_methods(out, t.methods());
    out += "],\"sites\":[";
    for (std::size_t i = 0; i < t.sites().size(); ++i) {
        const site& s = t.sites()[i];
        out += i ? ",{" : "{";
        append_key(out, "class");
        append_number(out, std::uint64_t{s.klass});
        out += ',';
        append_frames(out, s.frames);
        append_field(out, "samples", s.samples);
        append_field(out, "objects", s.objects);
        append_field(out, "bytes", s.bytes);
        append_field(out, "live_samples", live_samples[i]);
        append_field(out, "live_objects", live[i].objects);
        append_field(out, "live_bytes", live[i].bytes);
        out += '}';
    }
    out += ']';
}

// Creates path (never an existing name, never through a link, mode 0600) and writes text to it.
bool write_new_file(const std::string& path, const std::string& text, std::string& error) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        error = path + ": " + std::strerror(errno);
        return false;
    }
    std::size_t done = 0;
    while (done < text.size()) {
        ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            error = path + ": " + std::strerror(errno);
            ::close(fd);
            return false;
        }
        done += static_cast<std::size_t>(n);
    }
    return ::close(fd) == 0;
}

}  // namespace

std::string answer_json(const answer_facts& facts, const site_table* tables, const cpu_table* cpu) {
    std::string out = "{\"protocol\":";
    append_number(out, std::int64_t{protocol_version});
    out += ",\"agent\":";
    append_string(out, HEAPD_AGENT_VERSION);
    out += ",\"command\":";
    append_string(out, command_name(facts.what));
    out += ",\"error\":";
    append_string(out, facts.error);
    append_field(out, "sampling", facts.sampling);
    append_field(out, "interval", facts.interval);
    append_field(out, "depth", std::int64_t{facts.depth});
    append_field(out, "seconds", facts.seconds);
    append_field(out, "dropped_ring", facts.ring_dropped);
    append_field(out, "memory_bytes", facts.memory_bytes);
    append_field(out, "cpu_sampling", facts.cpu_sampling);
    append_field(out, "cpu_period_ms", std::int64_t{facts.cpu_period_ms});
    append_field(out, "cpu_seconds", facts.cpu_seconds);
    if (tables != nullptr) append_tables(out, *tables);
    if (cpu != nullptr) append_cpu(out, *cpu);
    out += "}\n";
    return out;
}

bool write_answer(const std::string& final_path, const std::string& text, std::string& error) {
    // Written under a name of its own, then renamed: whoever finds the answer's name finds it whole.
    const std::string path = final_path + ".part";
    if (!write_new_file(path, text, error)) {
        ::unlink(path.c_str());
        return false;
    }
    if (::rename(path.c_str(), final_path.c_str()) != 0) {
        error = final_path + ": " + std::strerror(errno);
        ::unlink(path.c_str());
        return false;
    }
    return true;
}

}  // namespace heapd::agent
