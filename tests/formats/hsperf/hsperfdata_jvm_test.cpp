// The hsperfdata reader against real JVMs: every counter jcmd PerfCounter.print shows, with the
// same value wherever the counter held still across the reads, and the summary against jstat -gc.
#include "formats/hsperf/hsperfdata.h"
#include "formats/hsperf/hsperfdata_summary.h"

#include <pwd.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <variant>

#include "formats/hprof/mapped_file.h"
#include "support/jvm_process.h"

namespace heapd {
namespace {

using value = std::variant<std::int64_t, std::string>;
using counters = std::map<std::string, value>;

std::string perfdata_path(pid_t pid) {
    passwd* pw = ::getpwuid(::geteuid());
    return std::string("/tmp/hsperfdata_") + (pw ? pw->pw_name : "root") + "/" + std::to_string(pid);
}

counters read_counters(const hsperf_snapshot& s) {
    counters out;
    for (const auto& e : s.entries()) {
        if (auto l = e.long_value())
            out[std::string(e.name)] = *l;
        else if (auto t = e.string_value())
            out[std::string(e.name)] = std::string(*t);
    }
    return out;
}

// `jcmd PID PerfCounter.print`: name=123 or name="text", one a line, after the pid line.
counters parse_jcmd(const std::string& text) {
    counters out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        auto eq = line.find('=');
        if (eq == std::string::npos) continue;
        std::string name = line.substr(0, eq), v = line.substr(eq + 1);
        if (v.size() >= 2 && v.front() == '"' && v.back() == '"')
            out[name] = v.substr(1, v.size() - 2);
        else
            out[name] = static_cast<std::int64_t>(std::stoll(v));
    }
    return out;
}

// The JVM's counters read by heapd, then by jcmd, then by heapd again.
struct three_reads {
    counters before, jcmd, after;
};

three_reads read_around(const test::demo_jvm& jvm, const hsperf_data& data, const std::vector<std::string>& jcmd_args) {
    three_reads r;
    auto a = data.snapshot();
    EXPECT_TRUE(a) << a.error().describe();
    if (a) r.before = read_counters(*a);
    auto j = jvm.jcmd(jcmd_args);
    EXPECT_EQ(j.exit_code, 0) << j.err;
    r.jcmd = parse_jcmd(j.out);
    auto b = data.snapshot();
    EXPECT_TRUE(b) << b.error().describe();
    if (b) r.after = read_counters(*b);
    return r;
}

TEST(hsperfdata_jvm, reads_every_counter_jcmd_prints) {
    test::demo_jvm jvm({"-Xmx256m"}, {"2000"});
    ASSERT_TRUE(jvm.ready());
    ASSERT_EQ(jvm.jcmd({"GC.run"}).exit_code, 0);  // an attach listener and a GC: counters in use
    auto file = mapped_file::open(perfdata_path(jvm.pid()));
    ASSERT_TRUE(file) << file.error().describe();
    auto data = hsperf_data::parse(file->bytes());
    ASSERT_TRUE(data) << data.error().describe();
    EXPECT_TRUE(data->prologue().accessible);
    const auto p0 = data->prologue();
    auto r = read_around(jvm, *data, {"PerfCounter.print"});
    ASSERT_GT(r.jcmd.size(), 150u);
    std::size_t same = 0;
    // The JVM prints its prologue as pseudo-counters sun.perfdata.* (they are no entries).
    const auto p = data->prologue();
    EXPECT_EQ(r.jcmd.at("sun.perfdata.majorVersion"), value(std::int64_t{p.major}));
    EXPECT_EQ(r.jcmd.at("sun.perfdata.minorVersion"), value(std::int64_t{p.minor}));
    EXPECT_EQ(r.jcmd.at("sun.perfdata.size"), value(static_cast<std::int64_t>(file->size())));
    const auto used = std::get<std::int64_t>(r.jcmd.at("sun.perfdata.used"));  // may grow as counters are added
    EXPECT_GE(used, std::int64_t{p0.used});
    EXPECT_LE(used, std::int64_t{p.used});
    EXPECT_EQ(r.jcmd.at("sun.perfdata.overflow"), value(std::int64_t{p.overflow}));
    for (const auto& [name, jv] : r.jcmd) {
        if (name.starts_with("sun.perfdata.")) continue;
        ASSERT_TRUE(r.after.contains(name)) << name << " printed by jcmd, not found by heapd";
        if (!r.before.contains(name) || r.before.at(name) != r.after.at(name)) continue;  // it changed
        EXPECT_EQ(r.after.at(name), jv) << name;
        ++same;
    }
    EXPECT_GT(same, 100u);
    for (const auto& [name, v] : r.before)
        EXPECT_TRUE(r.jcmd.contains(name)) << name << " found by heapd, not printed by jcmd";
}

// The jstat -gc columns computed from a summary.
std::map<std::string, double> jstat_columns(const jvm_perf_summary& s) {
    std::map<std::string, double> c;
    auto kb = [](std::int64_t b) { return static_cast<double>(b) / 1024.0; };
    for (const auto& g : s.generations) {
        for (const auto& sp : g.spaces) {
            std::string col = g.index == 0 ? (sp.index == 0 ? "E" : sp.index == 1 ? "S0" : "S1") : "O";
            c[col + "C"] = kb(sp.capacity);
            c[col + "U"] = kb(sp.used);
        }
    }
    for (const auto& col : s.collectors) {
        std::string n = col.index == 0 ? "YGC" : col.index == 1 ? "FGC" : "CGC";
        c[n] = static_cast<double>(col.invocations);
        c[n + "T"] = col.seconds;
    }
    c["GCT"] = s.gc_seconds;
    return c;
}

void expect_jstat_agrees(const std::vector<std::string>& flags, std::int64_t max_low, std::int64_t max_high) {
    test::demo_jvm jvm(flags, {"2000"});
    ASSERT_TRUE(jvm.ready());
    ASSERT_EQ(jvm.jcmd({"GC.run"}).exit_code, 0);
    auto file = mapped_file::open(perfdata_path(jvm.pid()));
    ASSERT_TRUE(file) << file.error().describe();
    auto data = hsperf_data::parse(file->bytes());
    ASSERT_TRUE(data);
    auto before = summarize(*data);
    auto jstat = test::run_command({"jstat", "-gc", std::to_string(jvm.pid())});
    auto after = summarize(*data);
    ASSERT_TRUE(before && after);
    ASSERT_EQ(jstat.exit_code, 0) << jstat.err;
    auto theirs = test::jstat_columns(jstat.out, -1);
    auto a = jstat_columns(*before), b = jstat_columns(*after);
    std::size_t compared = 0;
    for (const auto& [col, v] : theirs) {
        if (!a.contains(col)) continue;
        const double lo = std::min(a[col], b[col]), hi = std::max(a[col], b[col]);
        const double slack = col.ends_with("T") ? 0.0011 : 0.051;  // jstat rounds to 0.1 KB and 1 ms
        EXPECT_GE(v, lo - slack) << col << " jstat " << v << " heapd " << lo << ".." << hi << "\n" << jstat.out;
        EXPECT_LE(v, hi + slack) << col << " jstat " << v << " heapd " << lo << ".." << hi << "\n" << jstat.out;
        ++compared;
    }
    EXPECT_GE(compared, 12u) << jstat.out;
    EXPECT_GE(after->collectors.at(1).invocations, 1);  // GC.run is a full collection
    EXPECT_GE(after->heap.max_capacity, max_low);
    EXPECT_LE(after->heap.max_capacity, max_high);
    EXPECT_EQ(after->main_class, "Demo");
    EXPECT_EQ(after->last_cause, "Diagnostic Command");  // GC.run's cause
    ASSERT_TRUE(after->old_gen);
    EXPECT_GT(after->old_gen->used, 0);
    EXPECT_GT(after->uptime_seconds, 0);
    ASSERT_TRUE(after->gc_time_share);
    EXPECT_GT(*after->gc_time_share, 0);
    EXPECT_LT(*after->gc_time_share, 1);
    auto props = jvm.jcmd({"VM.system_properties"}).out;
    EXPECT_NE(props.find("java.vm.version=" + after->vm_version + "\n"), std::string::npos) << after->vm_version;
}

TEST(hsperfdata_jvm, agrees_with_jstat_on_g1) {
    expect_jstat_agrees({"-Xmx256m", "-XX:+UseG1GC"}, 256 << 20, (256 << 20) + 64);  // G1 pads by 8 bytes
}

TEST(hsperfdata_jvm, agrees_with_jstat_on_serial) {
    expect_jstat_agrees({"-Xmx256m", "-XX:+UseSerialGC"}, 256 << 20, 256 << 20);
}

TEST(hsperfdata_jvm, reads_the_out_of_memory_settings) {
    test::scratch_dir dir;
    test::demo_jvm jvm({"-XX:+HeapDumpOnOutOfMemoryError", "-XX:HeapDumpPath=" + dir.path(),
                        "-XX:OnOutOfMemoryError=kill -9 %p", "-Dafter=1"},
                       {"10"});
    ASSERT_TRUE(jvm.ready());
    auto file = mapped_file::open(perfdata_path(jvm.pid()));
    ASSERT_TRUE(file);
    auto data = hsperf_data::parse(file->bytes());
    ASSERT_TRUE(data);
    auto s = summarize(*data);
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->oom.heap_dump);
    EXPECT_EQ(s->oom.heap_dump_path, dir.path());
    EXPECT_EQ(s->oom.on_error, "kill -9 %p");
    EXPECT_FALSE(s->oom.exit);
    EXPECT_EQ(s->command, "Demo 10");
}

}  // namespace
}  // namespace heapd
