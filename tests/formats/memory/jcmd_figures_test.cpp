// What the JVM's diagnostic commands say of its memory, from their text as JDK 17 and JDK 25 print
// it (copied from real JVMs): the heap's range under every collector, metaspace from GC.heap_info
// or VM.metaspace, the code heaps' bounds, Native Memory Tracking's summary.
#include "formats/memory/jcmd_figures.h"

#include <gtest/gtest.h>

namespace heapd {
namespace {

constexpr std::int64_t kib = 1024;

TEST(heap_info, g1_on_jdk17_gives_its_range_used_and_metaspace) {
    const auto f = parse_heap_info(
        "5661:\n"
        " garbage-first heap   total 65536K, used 1439K [0x00000000fc000000, 0x0000000100000000)\n"
        "  region size 1024K, 1 young (1024K), 0 survivors (0K)\n"
        " Metaspace       used 133K, committed 320K, reserved 1114112K\n"
        "  class space    used 4K, committed 128K, reserved 1048576K\n");
    ASSERT_TRUE(f.heap);
    EXPECT_EQ(f.heap->begin, 0xfc000000u);
    EXPECT_EQ(f.heap->end, 0x100000000u);
    EXPECT_EQ(f.heap_used, 1439 * kib);
    EXPECT_EQ(f.metaspace_used, 133 * kib);
    EXPECT_EQ(f.metaspace_committed, 320 * kib);
    EXPECT_EQ(f.metaspace_reserved, 1114112 * kib);
    EXPECT_EQ(f.class_space_used, 4 * kib);
    EXPECT_EQ(f.class_space_committed, 128 * kib);
}

TEST(heap_info, serial_and_parallel_span_their_generations) {
    const auto serial = parse_heap_info(
        " def new generation   total 19648K, used 1405K [0x00000000fc000000, 0x00000000fd550000, 0x00000000fd550000)\n"
        "  eden space 17472K,   8% used [0x00000000fc000000, 0x00000000fc15f790, 0x00000000fd110000)\n"
        "  from space 2176K,   0% used [0x00000000fd110000, 0x00000000fd110000, 0x00000000fd330000)\n"
        "  to   space 2176K,   0% used [0x00000000fd330000, 0x00000000fd330000, 0x00000000fd550000)\n"
        " tenured generation   total 43712K, used 0K [0x00000000fd550000, 0x0000000100000000, 0x0000000100000000)\n"
        "   the space 43712K,   0% used [0x00000000fd550000, 0x00000000fd550000, 0x00000000fd550200, "
        "0x0000000100000000)\n"
        " Metaspace       used 179K, committed 384K, reserved 1114112K\n"
        "  class space    used 5K, committed 128K, reserved 1048576K\n");
    ASSERT_TRUE(serial.heap);
    EXPECT_EQ(serial.heap->begin, 0xfc000000u);
    EXPECT_EQ(serial.heap->end, 0x100000000u);
    EXPECT_EQ(serial.heap_used, 1405 * kib);
    const auto parallel = parse_heap_info(
        " PSYoungGen      total 18944K, used 1310K [0x00000000feb00000, 0x0000000100000000, 0x0000000100000000)\n"
        "  eden space 16384K, 8% used [0x00000000feb00000,0x00000000fec47b70,0x00000000ffb00000)\n"
        " ParOldGen       total 44032K, used 0K [0x00000000fc000000, 0x00000000feb00000, 0x00000000feb00000)\n"
        "  object space 44032K, 0% used [0x00000000fc000000,0x00000000fc000000,0x00000000feb00000)\n"
        " Metaspace       used 180K, committed 384K, reserved 1114112K\n");
    ASSERT_TRUE(parallel.heap);
    EXPECT_EQ(parallel.heap->begin, 0xfc000000u);
    EXPECT_EQ(parallel.heap->end, 0x100000000u);
    EXPECT_EQ(parallel.metaspace_committed, 384 * kib);
}

TEST(heap_info, shenandoah_gives_its_reserved_region_and_zgc_none) {
    const auto shenandoah = parse_heap_info(
        "Shenandoah Heap\n 65536K max, 65536K soft max, 65536K committed, 1280K used\n 256 x 256K regions\n"
        "Status: not cancelled\nReserved region:\n - [0x00000000fc000000, 0x0000000100000000) \n"
        "Collection set:\n - map (vanilla): 0x0000000000013f00\n - map (biased):  0x0000000000010000\n\n"
        " Metaspace       used 186K, committed 384K, reserved 1114112K\n");
    ASSERT_TRUE(shenandoah.heap);
    EXPECT_EQ(shenandoah.heap->begin, 0xfc000000u);
    EXPECT_EQ(shenandoah.heap->end, 0x100000000u);
    const auto z = parse_heap_info(
        " ZHeap           used 2M, capacity 64M, max capacity 64M\n"
        " Metaspace       used 180K, committed 384K, reserved 1114112K\n");
    EXPECT_FALSE(z.heap);
    EXPECT_EQ(z.metaspace_committed, 384 * kib);
}

TEST(heap_info, jdk25_prints_metaspace_at_the_head_of_vm_metaspace) {
    const auto heap = parse_heap_info(
        "6015:\ngarbage-first heap   total reserved 65536K, committed 65536K, used 7310K "
        "[0x00000000fc000000, 0x0000000100000000)\n region size 1024K, 6 young (6144K), 0 survivors (0K)\n");
    ASSERT_TRUE(heap.heap);
    EXPECT_EQ(heap.heap_used, 7310 * kib);
    EXPECT_FALSE(heap.metaspace_committed);
    const auto meta = parse_heap_info(
        "6015:\nMetaspace        used 160K, committed 384K, reserved 1114112K\n"
        " class space     used 8K, committed 128K, reserved 1048576K\n\n"
        "Usage:\n  Non-Class:    2 chunks,      4.00 MB capacity,  196.00 KB (  5%) committed\n"
        "Virtual space:\n  Non-class space:       64.00 MB reserved,     256.00 KB ( <1%) committed,  1 nodes.\n");
    EXPECT_FALSE(meta.heap);
    EXPECT_EQ(meta.metaspace_used, 160 * kib);
    EXPECT_EQ(meta.metaspace_committed, 384 * kib);
    EXPECT_EQ(meta.class_space_committed, 128 * kib);
}

TEST(code_cache, the_bounds_of_each_code_heap) {
    const auto heaps = parse_code_heaps(
        "5661:\n"
        "CodeHeap 'non-profiled nmethods': size=120036Kb used=14Kb max_used=14Kb free=120021Kb\n"
        " bounds [0x00007f15b0ec7000, 0x00007f15b1137000, 0x00007f15b8400000]\n"
        "CodeHeap 'profiled nmethods': size=120032Kb used=11Kb max_used=11Kb free=120021Kb\n"
        " bounds [0x00007f15a9400000, 0x00007f15a9670000, 0x00007f15b0938000]\n"
        "CodeHeap 'non-nmethods': size=5692Kb used=1077Kb max_used=1091Kb free=4614Kb\n"
        " bounds [0x00007f15b0938000, 0x00007f15b0ba8000, 0x00007f15b0ec7000]\n"
        " total_blobs=369 nmethods=27 adapters=257\n");
    ASSERT_EQ(heaps.size(), 3u);
    EXPECT_EQ(heaps[0].begin, 0x00007f15b0ec7000u);
    EXPECT_EQ(heaps[0].end, 0x00007f15b8400000u);
    EXPECT_EQ(heaps[2].begin, 0x00007f15b0938000u);
    EXPECT_TRUE(parse_code_heaps("Unknown diagnostic command\n").empty());
}

constexpr const char* nmt17 = R"(
5661:

Native Memory Tracking:

(Omitting categories weighting less than 1KB)

Total: reserved=1566258KB, committed=170966KB
       malloc: 47346KB #4643
       mmap:   reserved=1518912KB, committed=123620KB

-                 Java Heap (reserved=65536KB, committed=65536KB)
                            (mmap: reserved=65536KB, committed=65536KB) 
 
-                     Class (reserved=1048660KB, committed=212KB)
                            (classes #598)
                            (  instance classes #498, array classes #100)
                            (malloc=84KB #734) (at peak) 
                            (mmap: reserved=1048576KB, committed=128KB) 
                            (  Metadata:   )
                            (    reserved=65536KB, committed=192KB)
                            (    used=129KB)
                            (    waste=63KB =33.00%)
                            (  Class space:)
                            (    reserved=1048576KB, committed=128KB)
                            (    used=5KB)
                            (    waste=123KB =96.17%)
 
-                    Thread (reserved=40045KB, committed=3009KB)
                            (thread #39)
                            (stack: reserved=39936KB, committed=2900KB)
                            (malloc=65KB #238) (peak=74KB #242) 
                            (arena=44KB #76) (peak=83KB #34)
 
-                      Code (reserved=247731KB, committed=7591KB)
                            (malloc=43KB #734) (at peak) 
                            (mmap: reserved=247688KB, committed=7548KB) 
 
-                        GC (reserved=39550KB, committed=39550KB)
                            (malloc=4338KB #383) (at peak) 
                            (mmap: reserved=35212KB, committed=35212KB) 
 
-                  Compiler (reserved=167KB, committed=167KB)
                            (malloc=2KB #21) (at peak) 
                            (arena=165KB #5) (peak=500KB #14)
 
)";

TEST(nmt_summary, jdk17_categories_and_the_figures_inside_them) {
    const auto s = parse_nmt_summary(nmt17);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->reserved, 1566258 * kib);
    EXPECT_EQ(s->committed, 170966 * kib);
    const nmt_category* heap = s->find("Java Heap");
    ASSERT_NE(heap, nullptr);
    EXPECT_EQ(heap->committed, 65536 * kib);
    ASSERT_NE(s->find("Code"), nullptr);
    EXPECT_EQ(s->find("Code")->committed, 7591 * kib);
    ASSERT_NE(s->find("Thread"), nullptr);
    EXPECT_EQ(s->find("Thread")->reserved, 40045 * kib);
    EXPECT_EQ(s->threads, 39);
    EXPECT_EQ(s->stack_committed, 2900 * kib);
    EXPECT_EQ(s->metadata_committed, 192 * kib);
    EXPECT_EQ(s->class_space_committed, 128 * kib);
    EXPECT_EQ(s->find("Metaspace"), nullptr);  // past the excerpt
}

TEST(nmt_summary, jdk25_says_threads_and_tags) {
    const auto s = parse_nmt_summary(
        "6015:\n\nNative Memory Tracking:\n\nTotal: reserved=1534228KB, committed=141892KB\n"
        "       malloc: 17488KB #5911, peak=17385KB #5913\n\n"
        "-                    Thread (reserved=39046KB, committed=3058KB)\n"
        "                            (threads #38)\n"
        "                            (stack: reserved=38912KB, committed=2924KB, peak=2924KB)\n"
        "                            (malloc=92KB tag=Thread #230) (peak=100KB #234)\n\n"
        "-                     Other (reserved=40960KB, committed=40960KB)\n");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->threads, 38);
    EXPECT_EQ(s->stack_committed, 2924 * kib);
    ASSERT_EQ(s->categories.size(), 2u);
    EXPECT_EQ(s->categories[1].name, "Other");
    EXPECT_EQ(s->categories[1].committed, 40960 * kib);
}

TEST(nmt_summary, none_when_tracking_is_off) {
    EXPECT_FALSE(parse_nmt_summary("7757:\nNative memory tracking is not enabled\n"));
}

}  // namespace
}  // namespace heapd
