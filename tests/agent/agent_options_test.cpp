// The agent's options string: commands, settings and their bounds, and errors that still name the
// answer file.
#include "agent/agent_options.h"

#include <gtest/gtest.h>

namespace heapd::agent {
namespace {

TEST(agent_options, reads_a_command_and_its_settings) {
    agent_options o;
    std::string error;
    ASSERT_TRUE(
        parse_agent_options("start,interval=65536,depth=8,protocol=1,file=/tmp/heapd-agent-12-ab.json", o, error))
        << error;
    EXPECT_EQ(o.what, command::start);
    EXPECT_EQ(o.interval, 65536);
    EXPECT_EQ(o.depth, 8);
    EXPECT_EQ(o.file, "/tmp/heapd-agent-12-ab.json");
    agent_options d;
    ASSERT_TRUE(parse_agent_options("show,gc=1", d, error));
    EXPECT_EQ(d.what, command::show);
    EXPECT_TRUE(d.gc);
    EXPECT_EQ(d.interval, default_interval);
    EXPECT_EQ(d.depth, default_depth);
    agent_options none;
    ASSERT_TRUE(parse_agent_options(nullptr, none, error));
    EXPECT_EQ(none.what, command::status);
}

TEST(agent_options, refuses_what_it_does_not_know_or_allow) {
    for (const char* bad : {"begin", "start,depth=0", "start,depth=65", "start,interval=-1",
                            "start,interval=2147483648", "start,interval=12x", "stop,gc=2", "show,colour=red",
                            "show,file=/etc/passwd", "show,file=/tmp/heapd-agent-../x.json",
                            "show,file=/tmp/heapd-agent-a/b.json", "show,file=/tmp/heapd-agent-.json"}) {
        agent_options o;
        std::string error;
        EXPECT_FALSE(parse_agent_options(bad, o, error)) << bad;
        EXPECT_FALSE(error.empty()) << bad;
        EXPECT_TRUE(o.file.empty()) << bad;
    }
    agent_options o;
    std::string error;
    EXPECT_FALSE(parse_agent_options(std::string(1001, 'x').c_str(), o, error));
}

TEST(agent_options, the_oom_watch_takes_heapds_socket_and_how_long_to_wait) {
    agent_options o;
    std::string error;
    ASSERT_TRUE(parse_agent_options("oom", o, error)) << error;
    EXPECT_EQ(o.what, command::oom);
    EXPECT_EQ(o.socket, "/run/heapd/heapd.sock");
    EXPECT_EQ(o.wait_s, 120);
    ASSERT_TRUE(parse_agent_options("oom,socket=/tmp/d/heapd.sock,wait=30", o, error)) << error;
    EXPECT_EQ(o.socket, "/tmp/d/heapd.sock");
    EXPECT_EQ(o.wait_s, 30);
    for (const char* bad : {"oom,socket=heapd.sock", "oom,wait=0", "oom,wait=601",
                            "oom,socket=/"
                            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}) {
        agent_options b;
        error.clear();
        EXPECT_FALSE(parse_agent_options(bad, b, error)) << bad;
        EXPECT_EQ(b.socket, "/run/heapd/heapd.sock") << bad;
    }
}

TEST(agent_options, an_error_still_names_the_answer_file) {
    agent_options o;
    std::string error;
    EXPECT_FALSE(parse_agent_options("begin,depth=99,file=/tmp/heapd-agent-7-f00.json", o, error));
    EXPECT_NE(error.find("unknown command 'begin'"), std::string::npos) << error;
    EXPECT_EQ(o.file, "/tmp/heapd-agent-7-f00.json");
    EXPECT_EQ(o.depth, default_depth);
}

}  // namespace
}  // namespace heapd::agent
