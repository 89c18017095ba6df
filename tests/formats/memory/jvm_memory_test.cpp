// The breakdown from its inputs: each mapping counted in one part (the heap's range, the code heaps,
// the mapping at a blocked thread's stack pointer, files), the rest as other native memory less the
// metaspace; what is unknown stays unknown and says so. Its JSON form reads back, its text is safe.
#include "formats/memory/jvm_memory.h"

#include <gtest/gtest.h>

#include "formats/memory/memory_report.h"

namespace heapd {
namespace {

constexpr std::uint64_t mib = 1 << 20;

mapping map(std::uint64_t begin, std::uint64_t end, const char* perms, std::uint64_t rss_mib, std::string path = {}) {
    mapping m;
    m.range = {begin, end};
    std::copy(perms, perms + 4, m.perms);
    m.path = std::move(path);
    m.rss = rss_mib * mib;
    m.anonymous = m.file_backed() ? 0 : m.rss;
    return m;
}

// A JVM: a 64 MiB heap with 10 MiB touched and the CDS archive's 1 MiB in it, a code heap of which
// 8 MiB is committed (3 resident), two thread stacks (one thread running), libjvm, and 50 MiB of
// malloc arenas.
memory_inputs jvm() {
    memory_inputs in;
    in.mappings = {
        map(0xfc000000, 0xffe00000, "rw-p", 10),
        map(0xffe00000, 0xfff00000, "rw-p", 1, "/jdk/lib/server/classes.jsa"),
        map(0x7f0000000000, 0x7f0000800000, "rwxp", 3),
        map(0x7f0000800000, 0x7f0010000000, "---p", 0),
        map(0x7f1000000000, 0x7f1003200000, "rw-p", 50),
        map(0x7f2000000000, 0x7f2000004000, "---p", 1),  // a guard zone the JVM touched
        map(0x7f2000004000, 0x7f2000100000, "rw-p", 1),
        map(0x7f2000100000, 0x7f2000104000, "---p", 0),
        map(0x7f2000104000, 0x7f2000200000, "rw-p", 1),
        map(0x7f3000000000, 0x7f3001000000, "r-xp", 12, "/jdk/lib/server/libjvm.so"),
    };
    in.stack_pointers = {0x7f20000ff000, 0x7f20001ff000, 0x7f20001fe000};  // two threads on one stack: counted once
    in.threads = 4;
    heap_info_figures h;
    h.heap = address_range{0xfc000000, 0x100000000};
    h.heap_used = 9 * mib;
    h.metaspace_committed = 5 * mib;
    h.metaspace_used = 4 * mib;
    in.heap_info = h;
    in.code_heaps = {{0x7f0000000000, 0x7f0010000000}};
    in.heap_committed = 64 * mib;
    in.heap_used = 2 * mib;
    return in;
}

TEST(jvm_memory, each_mapping_in_one_part) {
    const memory_breakdown b = break_down(jvm());
    EXPECT_EQ(b.resident, static_cast<std::int64_t>(79 * mib));
    const memory_part* heap = b.part("java_heap");
    ASSERT_NE(heap, nullptr);
    EXPECT_EQ(heap->resident, static_cast<std::int64_t>(11 * mib));  // the archive's heap objects included
    EXPECT_EQ(heap->committed, static_cast<std::int64_t>(64 * mib));
    EXPECT_EQ(heap->used, static_cast<std::int64_t>(9 * mib));  // GC.heap_info's, not hsperfdata's
    const memory_part* code = b.part("code_cache");
    EXPECT_EQ(code->resident, static_cast<std::int64_t>(3 * mib));
    EXPECT_EQ(code->committed, static_cast<std::int64_t>(8 * mib));
    const memory_part* stacks = b.part("thread_stacks");
    // Two stacks of 1 MiB seen, one with a 1 MiB guard zone; 4 threads, 3 stack pointers: one
    // running thread at the mean.
    EXPECT_EQ(stacks->resident, static_cast<std::int64_t>(4 * mib + mib / 2));
    EXPECT_EQ(stacks->count, 4);
    EXPECT_NE(stacks->source.find("1 running thread"), std::string::npos) << stacks->source;
    EXPECT_EQ(b.part("mapped_files")->resident, static_cast<std::int64_t>(12 * mib));
    EXPECT_EQ(b.part("metaspace")->committed, static_cast<std::int64_t>(5 * mib));
    EXPECT_EQ(b.part("other_native")->resident, static_cast<std::int64_t>(45 * mib));  // 50 less the metaspace
    EXPECT_FALSE(b.nmt);
    memory_inputs tracked = jvm();
    tracked.nmt.emplace();
    tracked.nmt->committed = 7;
    ASSERT_TRUE(break_down(tracked).nmt);
    EXPECT_EQ(break_down(tracked).nmt->committed, 7);
}

TEST(jvm_memory, without_the_jvms_answers_the_heap_counts_its_used_bytes_and_says_so) {
    memory_inputs in = jvm();
    in.heap_info.reset();
    in.code_heaps.clear();
    const memory_breakdown b = break_down(in);
    // Its range unknown, the heap is at least its used bytes (hsperfdata's), out of other native.
    EXPECT_EQ(b.part("java_heap")->resident, static_cast<std::int64_t>(2 * mib));
    EXPECT_EQ(b.part("java_heap")->used, static_cast<std::int64_t>(2 * mib));
    EXPECT_NE(b.part("java_heap")->source.find("at least its used bytes"), std::string::npos);
    EXPECT_FALSE(b.part("code_cache")->resident);
    EXPECT_FALSE(b.part("metaspace")->committed);
    EXPECT_EQ(b.part("mapped_files")->resident, static_cast<std::int64_t>(13 * mib));
    EXPECT_EQ(b.part("other_native")->resident, static_cast<std::int64_t>(61 * mib));
    EXPECT_NE(b.part("other_native")->source.find("the Java heap's used bytes"), std::string::npos);
    // A heap full to its limit, as at an OutOfMemoryError: counted as heap, never as native memory,
    // and never more than what no file backs.
    in.heap_used = 64 * mib;
    const memory_breakdown full = break_down(in);
    EXPECT_EQ(full.part("java_heap")->resident, static_cast<std::int64_t>(63 * mib));
    EXPECT_EQ(full.part("other_native")->resident, 0);
    // Nothing known of the heap: it stays in other native, which says so.
    in.heap_used.reset();
    const memory_breakdown unknown = break_down(in);
    EXPECT_FALSE(unknown.part("java_heap")->resident);
    EXPECT_EQ(unknown.part("other_native")->resident, static_cast<std::int64_t>(63 * mib));
    EXPECT_NE(unknown.part("other_native")->source.find("the Java heap's resident part is in it"), std::string::npos);
}

TEST(jvm_memory, percent_of_the_limit) {
    memory_breakdown b = break_down(jvm());
    EXPECT_FALSE(b.percent_of_limit());
    b.limit.bytes = 158 * mib;
    EXPECT_DOUBLE_EQ(*b.percent_of_limit(), 50.0);
}

TEST(memory_report, json_reads_back_and_text_is_safe) {
    memory_breakdown b = break_down(jvm());
    b.pid = 4242;
    b.limit.bytes = 200 * mib;
    b.limit.source = "cgroup v1 /evil\x1b[2J";
    b.limit.oom_kills = 1;
    b.limit.pressure = memory_pressure{12.5, 3.25, 8, 1.5};
    b.limit.pressure_source = "cgroup v2 /evil";
    b.notes = {"VM.native_memory summary: refused"};
    nmt_summary n;
    n.committed = 100 * mib;
    n.categories = {{"Java Heap", 64 * mib, 64 * mib}};
    b.nmt = n;
    const auto back = breakdown_from_json(to_json(b));
    ASSERT_TRUE(back) << back.error().describe();
    EXPECT_EQ(to_json(*back), to_json(b));
    const std::string text = memory_text(b);
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
    EXPECT_NE(text.find("JVM 4242: 79.0 MiB resident, 39.5% of 200 MiB"), std::string::npos) << text;
    EXPECT_NE(text.find("1 OOM kill(s)"), std::string::npos) << text;
    EXPECT_NE(text.find("memory pressure (cgroup v2 /evil): some 12.50% over 10 s, 3.25% over 60 s; full 8.00%, 1.50%"),
              std::string::npos)
        << text;
    EXPECT_FALSE(breakdown_from_json(memory_json{{"limit", {{"pressure", {{"some_avg10", "x"}}}}}}));
    EXPECT_NE(text.find("Java Heap"), std::string::npos) << text;
    EXPECT_FALSE(breakdown_from_json(memory_json{{"pid", "x"}}));
    EXPECT_FALSE(breakdown_from_json(memory_json{{"parts", {{{"name", 3}}}}}));
}

}  // namespace
}  // namespace heapd
