// heapd analyze's progress: lines on a stderr that is no terminal when --progress asks for them,
// nothing there otherwise, and a bar redrawn in place on a terminal (daemon/commands/analyze_progress.h).

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "support/generated_dump.h"
#include "support/jvm_process.h"

namespace heapd {
namespace {

// The percent of the whole analysis a progress line shows ("[###...]  45%  dominators ...").
int percent_of(const std::string& line) {
    const auto close = line.find("] ");
    return close == std::string::npos ? -1 : std::atoi(line.c_str() + close + 2);
}

TEST(analyze_progress, lines_go_through_every_phase_and_within_the_long_ones) {
    test::scratch_dir dir;
    const test::generated_dump dump = test::generate_dump(dir.file("generated.hprof"), "24M", 16384);
    const auto r = test::run_command({test::heapd_binary(), "analyze", "--no-index", "--progress", dump.path});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> phases;
    int last = 0, graph_steps = 0, dominator_steps = 0;
    std::istringstream lines(r.err);
    for (std::string line; std::getline(lines, line);) {
        ASSERT_TRUE(line.starts_with("generated.hprof [")) << line;
        const int percent = percent_of(line);
        EXPECT_GE(percent, last) << line;
        last = percent;
        for (const char* phase : {"index", "census", "object graph", "threads", "waste", "dominators", "suspects"}) {
            if (line.find(std::string("%  ") + phase + "  ") == std::string::npos) continue;
            if (phases.empty() || phases.back() != phase) phases.push_back(phase);
            if (line.ends_with("of the phase)")) (std::string(phase) == "dominators" ? dominator_steps : graph_steps)++;
        }
    }
    EXPECT_EQ(phases, (std::vector<std::string>{"index", "census", "object graph", "threads", "waste", "dominators",
                                                "suspects"}));
    EXPECT_GE(graph_steps, 3);
    EXPECT_GE(dominator_steps, 3);
    EXPECT_GE(last, 80);

    // Without --progress, and no terminal: stderr stays clean.
    const auto quiet = test::run_command({test::heapd_binary(), "analyze", "--no-index", dump.path});
    ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
    EXPECT_EQ(quiet.err, "");
}

TEST(analyze_progress, a_terminal_gets_a_bar_redrawn_in_place_and_cleared_at_the_end) {
    test::scratch_dir dir;
    const test::generated_dump dump = test::generate_dump(dir.file("generated.hprof"), "24M", 16384);
    // script(1) runs the command on a pseudo-terminal and copies what it writes.
    const std::string command = test::heapd_binary() + " analyze --no-index " + dump.path + " >/dev/null";
    const auto r = test::run_command({"script", "-qfec", command, "/dev/null"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("\rgenerated.hprof ["), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("dominators"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find('\n'), std::string::npos) << r.out;  // redrawn in place: no line ends
    EXPECT_TRUE(r.out.ends_with("\r\x1b[K")) << r.out;        // and cleared at the end
}

}  // namespace
}  // namespace heapd
