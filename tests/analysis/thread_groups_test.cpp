// Tests of the thread groups a thread leak is seen by: name patterns, groups by name and by stack,
// counts of states and daemons.
#include "analysis/thread_groups.h"

#include <gtest/gtest.h>

namespace heapd {
namespace {

thread_report thread(std::string name, std::string state, bool daemon, std::vector<std::string> frames) {
    return {std::move(name), std::move(state), daemon, std::move(frames)};
}

TEST(thread_groups, a_name_pattern_writes_each_run_of_digits_as_one_hash) {
    EXPECT_EQ(name_pattern("pool-3-thread-17"), "pool-#-thread-#");
    EXPECT_EQ(name_pattern("main"), "main");
    EXPECT_EQ(name_pattern("42"), "#");
    EXPECT_EQ(name_pattern("C2 CompilerThread0"), "C# CompilerThread#");
    EXPECT_EQ(name_pattern(""), "");
}

TEST(thread_groups, threads_are_grouped_by_name_pattern_and_by_whole_stack) {
    const std::vector<std::string> sleeping = {"java.lang.Thread.sleep(Native Method)", "Worker.run(Worker.java:9)"};
    const std::vector<std::string> other_sleep = {"java.lang.Thread.sleep(Native Method)", "Tick.run(Tick.java:3)"};
    std::vector<thread_report> threads;
    for (int i = 0; i < 4; ++i)
        threads.push_back(thread("worker-" + std::to_string(i), "TIMED_WAITING", true, sleeping));
    threads.push_back(thread("tick-1", "TIMED_WAITING", true, other_sleep));
    threads.push_back(thread("main", "RUNNABLE", false, {"Main.main(Main.java:1)"}));
    threads.push_back(thread("Signal Dispatcher", "", false, {}));

    const thread_summary_report r = group_threads(threads);
    EXPECT_EQ(r.count, 7u);
    EXPECT_EQ(r.daemon, 5u);
    ASSERT_EQ(r.states.size(), 3u);
    EXPECT_EQ(r.states[0], (std::pair<std::string, std::uint64_t>{"TIMED_WAITING", 5}));
    EXPECT_EQ(r.states[1].second, 1u);

    ASSERT_EQ(r.by_name.size(), 4u);
    EXPECT_EQ(r.by_name[0].key, "worker-#");
    EXPECT_EQ(r.by_name[0].count, 4u);
    EXPECT_EQ(r.by_name[0].example, "worker-0");
    EXPECT_EQ(r.by_name[0].frames, sleeping);

    // The two sleeping stacks differ below their innermost frame: two groups, told apart by the
    // outermost frame in their keys.
    ASSERT_EQ(r.by_stack.size(), 4u);
    EXPECT_EQ(r.by_stack[0].key, "java.lang.Thread.sleep(Native Method) \u2026 Worker.run(Worker.java:9)");
    EXPECT_EQ(r.by_stack[0].count, 4u);
    EXPECT_EQ(r.by_stack[0].frames, sleeping);
    bool no_frames = false;
    for (const thread_group& g : r.by_stack) {
        if (g.key == "(no Java frames)") no_frames = g.count == 1 && g.example == "Signal Dispatcher";
        if (&g != &r.by_stack[0]) {
            EXPECT_EQ(g.count, 1u);
        }
        if (g.example == "main") {
            EXPECT_EQ(g.key, "Main.main(Main.java:1)");
        }
    }
    EXPECT_TRUE(no_frames);
}

TEST(thread_groups, groups_are_cut_to_the_most_and_keep_at_most_eight_frames) {
    std::vector<std::string> deep;
    for (int i = 0; i < 20; ++i) deep.push_back("F.f" + std::to_string(i) + "(F.java)");
    std::vector<thread_report> threads;
    for (int i = 0; i < 5; ++i)
        threads.push_back(thread("t" + std::string(1, static_cast<char>('a' + i)), "", false, deep));
    const thread_summary_report r = group_threads(threads, 3);
    EXPECT_EQ(r.by_name.size(), 3u);
    ASSERT_EQ(r.by_stack.size(), 1u);
    EXPECT_EQ(r.by_stack[0].count, 5u);
    EXPECT_EQ(r.by_stack[0].frames.size(), 8u);
}

}  // namespace
}  // namespace heapd
