// Tests of the hsperfdata summary on synthetic files shaped like those of G1, Parallel and ZGC
// JVMs, and of reading the out-of-memory settings from a JVM's arguments.
#include "formats/hsperf/hsperfdata_summary.h"

#include <gtest/gtest.h>

#include <limits>

#include "support/hsperf_builder.h"

namespace heapd {
namespace {

using test::hsperf_builder;

void add_space(hsperf_builder& b, int gen, int space, const std::string& name, std::int64_t used, std::int64_t capacity,
               std::int64_t max) {
    const std::string p = "sun.gc.generation." + std::to_string(gen) + ".space." + std::to_string(space) + ".";
    b.add_string(p + "name", name)
        .add_long(p + "used", used)
        .add_long(p + "capacity", capacity)
        .add_long(p + "maxCapacity", max);
}

void add_generation(hsperf_builder& b, int gen, const std::string& name, std::int64_t capacity, std::int64_t max) {
    const std::string p = "sun.gc.generation." + std::to_string(gen) + ".";
    b.add_string(p + "name", name).add_long(p + "capacity", capacity).add_long(p + "maxCapacity", max);
}

void add_collector(hsperf_builder& b, int index, const std::string& name, std::int64_t invocations,
                   std::int64_t ticks) {
    const std::string p = "sun.gc.collector." + std::to_string(index) + ".";
    b.add_string(p + "name", name)
        .add_long(p + "invocations", invocations)
        .add_long(p + "time", ticks)
        .add_long(p + "lastEntryTime", 0);
}

jvm_perf_summary summary_of(const hsperf_builder& b) {
    const auto file = b.build();  // the summary copies what it keeps
    auto data = hsperf_data::parse({file.data(), file.size()});
    EXPECT_TRUE(data);
    auto s = summarize(*data);
    EXPECT_TRUE(s) << s.error().describe();
    return *s;
}

TEST(hsperfdata_summary, reads_a_g1_jvm) {
    hsperf_builder b;
    b.add_string("sun.rt.javaCommand", "com.example.Server --port 8080")
        .add_string("java.property.java.vm.version", "17.0.21+9-1-deb12u1-Debian")
        .add_string("java.rt.vmArgs", "-Xmx256m -XX:+HeapDumpOnOutOfMemoryError -XX:HeapDumpPath=/var/dumps")
        .add_string("java.rt.vmFlags", "")
        .add_string("sun.gc.policy.name", "GarbageFirst")
        .add_string("sun.gc.lastCause", "G1 Evacuation Pause", 64, hsperf_builder::variable)
        .add_long("sun.os.hrt.frequency", 1000000000, hsperf_builder::units_hertz, hsperf_builder::constant)
        .add_long("sun.os.hrt.ticks", 20000000000, hsperf_builder::units_ticks)
        .add_long("sun.rt.createVmBeginTime", 1795257411568);
    add_generation(b, 0, "young", 20971544, 268435480);
    add_space(b, 0, 0, "eden", 4194304, 20971528, 268435464);
    add_space(b, 0, 1, "s0", 0, 8, 8);
    add_space(b, 0, 2, "s1", 1048576, 1048584, 268435464);
    add_generation(b, 1, "old", 100000008, 268435464);
    add_space(b, 1, 0, "space", 50000000, 100000008, 268435464);
    add_collector(b, 0, "G1 young collection pauses", 12, 300000000);
    add_collector(b, 1, "G1 full collection pauses", 1, 100000000);
    add_collector(b, 2, "G1 concurrent cycle pauses", 2, 100000000);
    auto s = summary_of(b);
    EXPECT_TRUE(s.accessible);
    EXPECT_TRUE(s.complete);
    EXPECT_EQ(s.command, "com.example.Server --port 8080");
    EXPECT_EQ(s.main_class, "com.example.Server");
    EXPECT_EQ(s.vm_version, "17.0.21+9-1-deb12u1-Debian");
    EXPECT_EQ(s.gc_policy, "GarbageFirst");
    EXPECT_EQ(s.last_cause, "G1 Evacuation Pause");
    ASSERT_EQ(s.generations.size(), 2u);
    EXPECT_EQ(s.generations[0].name, "young");
    ASSERT_EQ(s.generations[0].spaces.size(), 3u);
    EXPECT_EQ(s.generations[0].spaces[2].name, "s1");
    EXPECT_EQ(s.generations[0].spaces[2].used, 1048576);
    EXPECT_EQ(s.generations[0].used(), 4194304 + 1048576);
    EXPECT_EQ(s.heap.used, 4194304 + 1048576 + 50000000);
    EXPECT_EQ(s.heap.capacity, 20971544 + 100000008);
    EXPECT_EQ(s.heap.max_capacity, 268435464);  // G1: the generations share one maximum
    ASSERT_TRUE(s.old_gen);
    EXPECT_EQ(s.old_gen->used, 50000000);
    EXPECT_EQ(s.old_gen->capacity, 100000008);
    EXPECT_EQ(s.old_gen->max_capacity, 268435464);
    EXPECT_NEAR(*s.old_gen->occupancy(), 50000000.0 / 268435464.0, 1e-12);
    ASSERT_EQ(s.collectors.size(), 3u);
    EXPECT_EQ(s.collectors[0].name, "G1 young collection pauses");
    EXPECT_EQ(s.collectors[0].invocations, 12);
    EXPECT_DOUBLE_EQ(s.collectors[0].seconds, 0.3);
    EXPECT_EQ(s.gc_ticks, 500000000);
    EXPECT_DOUBLE_EQ(s.gc_seconds, 0.5);
    EXPECT_DOUBLE_EQ(s.uptime_seconds, 20.0);
    ASSERT_TRUE(s.gc_time_share);
    EXPECT_DOUBLE_EQ(*s.gc_time_share, 0.025);
    EXPECT_EQ(s.create_vm_begin_ms, 1795257411568);
    EXPECT_TRUE(s.oom.heap_dump);
    EXPECT_EQ(s.oom.heap_dump_path, "/var/dumps");
    EXPECT_FALSE(s.oom.exit);
}

TEST(hsperfdata_summary, adds_up_the_generations_of_parallel_and_serial) {
    hsperf_builder b;
    b.add_string("sun.gc.policy.name", "ParScav:MSC").add_string("java.vm.version", "11.0.2+9");
    add_generation(b, 0, "new", 89128960, 89128960);
    add_space(b, 0, 0, "eden", 2684408, 88080384, 88080384);
    add_generation(b, 1, "old", 179306496, 179306496);
    add_space(b, 1, 0, "old", 1000, 179306496, 179306496);
    auto s = summary_of(b);
    EXPECT_EQ(s.vm_version, "11.0.2+9");  // the older name of the counter
    EXPECT_EQ(s.heap.max_capacity, 268435456);
    EXPECT_EQ(s.heap.used, 2684408 + 1000);
    ASSERT_TRUE(s.old_gen);
    EXPECT_EQ(s.old_gen->used, 1000);
    EXPECT_FALSE(s.gc_time_share);  // no clock
    EXPECT_TRUE(s.collectors.empty());
    EXPECT_FALSE(s.oom.any());
}

TEST(hsperfdata_summary, reads_a_zgc_jvm_with_one_generation_numbered_one) {
    hsperf_builder b;
    add_generation(b, 1, "old", 8388608, 268435456);
    add_space(b, 1, 0, "space", 4194304, 8388608, 268435456);
    add_collector(b, 2, "Z concurrent cycle pauses", 3, 3000);
    b.add_long("sun.os.hrt.frequency", 1000000).add_long("sun.os.hrt.ticks", 1000000);
    auto s = summary_of(b);
    ASSERT_EQ(s.generations.size(), 1u);
    EXPECT_EQ(s.generations[0].index, 1);
    EXPECT_EQ(s.heap.max_capacity, 268435456);
    ASSERT_TRUE(s.old_gen);
    EXPECT_EQ(s.old_gen->used, 4194304);
    ASSERT_EQ(s.collectors.size(), 1u);
    EXPECT_EQ(s.collectors[0].index, 2);
    EXPECT_DOUBLE_EQ(*s.gc_time_share, 0.003);
}

TEST(hsperfdata_summary, ignores_counters_with_odd_names) {
    hsperf_builder b;
    b.add_long("sun.gc.generation.x.capacity", 5)
        .add_long("sun.gc.generation.99999999999.capacity", 5)
        .add_long("sun.gc.generation.0capacity", 5)
        .add_long("sun.gc.generation.0.space.q.used", 5)
        .add_string("sun.gc.collector.0.time", "not a number")
        .add_long("sun.gc.generation.", 1);
    auto s = summary_of(b);
    ASSERT_EQ(s.generations.size(), 1u);  // generation 0, from the "space.q" name, with nothing in it
    EXPECT_EQ(s.generations[0].capacity, 0);
    EXPECT_TRUE(s.generations[0].spaces.empty());
    ASSERT_EQ(s.collectors.size(), 1u);
    EXPECT_EQ(s.collectors[0].ticks, 0);
}

TEST(hsperfdata_summary, keeps_a_bounded_part_of_texts_and_counters_a_file_was_made_to_inflate) {
    hsperf_builder b(true, 0);
    b.add_string("sun.rt.javaCommand", "Main " + std::string(100'000, 'x'))
        .add_string("java.property.java.vm.version", std::string(4094, 'v') + "\xE2\x82\xAC")  // cut inside the euro
        .add_string("java.rt.vmArgs", "-XX:HeapDumpPath=" + std::string(50'000, '/'));
    for (int g = 0; g < 40; ++g) add_generation(b, g, std::string(1000, 'g'), 1, 1);
    for (int c = 0; c < 40; ++c) add_collector(b, c, "collector", 1, 1);
    auto s = summary_of(b);
    EXPECT_EQ(s.command.size(), max_summary_text);
    EXPECT_EQ(s.main_class, "Main");
    EXPECT_EQ(s.vm_version, std::string(4094, 'v'));
    EXPECT_EQ(s.vm_args.size(), max_summary_text);
    EXPECT_LE(s.oom.heap_dump_path.size(), max_summary_text);
    ASSERT_EQ(s.generations.size(), 16u);  // HotSpot has 3 at most
    EXPECT_EQ(s.generations[0].name.size(), 256u);
    EXPECT_EQ(s.collectors.size(), 16u);
}

TEST(hsperfdata_summary, holds_sums_of_damaged_counters_at_the_limits) {
    constexpr std::int64_t big = std::numeric_limits<std::int64_t>::max() - 5;
    hsperf_builder b;
    add_generation(b, 0, "young", big, big);
    add_space(b, 0, 0, "eden", big, big, big);
    add_space(b, 0, 1, "s0", big, big, big);
    add_generation(b, 1, "old", big, big);
    add_space(b, 1, 0, "old", -big, big, big);
    add_collector(b, 0, "a", 1, big);
    add_collector(b, 1, "b", 1, big);
    auto s = summary_of(b);
    EXPECT_EQ(s.generations[0].used(), std::numeric_limits<std::int64_t>::max());
    EXPECT_EQ(s.heap.used, 5);  // max, then the old generation's -big
    EXPECT_EQ(s.heap.capacity, std::numeric_limits<std::int64_t>::max());
    EXPECT_EQ(s.heap.max_capacity, std::numeric_limits<std::int64_t>::max());
    EXPECT_EQ(s.gc_ticks, std::numeric_limits<std::int64_t>::max());
}

TEST(hsperfdata_summary, marks_a_jvm_still_starting) {
    hsperf_builder b;
    b.accessible(false).add_string("sun.rt.javaCommand", "Main");
    auto s = summary_of(b);
    EXPECT_FALSE(s.accessible);
    EXPECT_EQ(s.main_class, "Main");
}

TEST(oom_settings, reads_flags_and_values_from_the_arguments) {
    auto o = parse_oom_settings("",
                                "-XX:+ExitOnOutOfMemoryError -XX:OnOutOfMemoryError=kill -9 %p "
                                "-XX:HeapDumpPath=/tmp/x.hprof -Dfoo=bar");
    EXPECT_TRUE(o.exit);
    EXPECT_FALSE(o.heap_dump);
    EXPECT_FALSE(o.crash);
    EXPECT_EQ(o.on_error, "kill -9 %p");
    EXPECT_EQ(o.heap_dump_path, "/tmp/x.hprof");
    EXPECT_TRUE(o.any());
}

TEST(oom_settings, later_arguments_win) {
    auto o = parse_oom_settings("+HeapDumpOnOutOfMemoryError HeapDumpPath=/from/file CrashOnOutOfMemoryError=true",
                                "-XX:-HeapDumpOnOutOfMemoryError -XX:HeapDumpPath=/from/args");
    EXPECT_FALSE(o.heap_dump);
    EXPECT_TRUE(o.crash);
    EXPECT_EQ(o.heap_dump_path, "/from/args");
    auto f = parse_oom_settings("+HeapDumpOnOutOfMemoryError HeapDumpPath=/from/file", "-Xmx1g");
    EXPECT_TRUE(f.heap_dump);
    EXPECT_EQ(f.heap_dump_path, "/from/file");
}

TEST(oom_settings, joins_several_commands_and_ignores_lookalikes) {
    auto o = parse_oom_settings("",
                                "-XX:OnOutOfMemoryError=echo one -XX:OnOutOfMemoryError=echo two --add-opens=a/b=c "
                                "-XX:+HeapDumpOnOutOfMemoryErrorX -Dx=-XX:+ExitOnOutOfMemoryError -DHeapDumpPath=/no");
    EXPECT_EQ(o.on_error, "echo one; echo two");
    EXPECT_FALSE(o.heap_dump);
    EXPECT_FALSE(o.exit);
    EXPECT_TRUE(o.heap_dump_path.empty());
    EXPECT_FALSE(parse_oom_settings("", "").any());
}

}  // namespace
}  // namespace heapd
