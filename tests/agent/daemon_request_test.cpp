// The agent's request for a dump at an OutOfMemoryError, as the daemon's own protocol code reads it,
// and the replies that let the waiting thread go (the real daemon answers it in
// e2e/java_thrown_oom_test).
#include "agent/daemon_request.h"

#include <gtest/gtest.h>

#include "formats/wire/protocol.h"

namespace heapd::agent {
namespace {

TEST(daemon_request, the_frame_is_a_dump_request_heapd_reads) {
    const std::string frame =
        dump_request_frame(4242, 987654, "direct-buffer", "java.lang.OutOfMemoryError made in \"x\"\\y\n\xc3\xa9z");
    ASSERT_GT(frame.size(), 4u);
    const std::uint32_t size = (std::uint32_t{static_cast<unsigned char>(frame[0])} << 24) |
                               (std::uint32_t{static_cast<unsigned char>(frame[1])} << 16) |
                               (std::uint32_t{static_cast<unsigned char>(frame[2])} << 8) |
                               static_cast<unsigned char>(frame[3]);
    EXPECT_EQ(size, frame.size() - 4);
    auto r = wire::decode_request(std::string_view(frame).substr(4));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->type, "dump");
    EXPECT_EQ(r->args["pid"], 4242);
    EXPECT_EQ(r->args["start_time"], 987654);
    EXPECT_EQ(r->args["trigger"], "oom");
    EXPECT_EQ(r->args["oom_kind"], "direct-buffer");
    // Quotes and backslashes escaped; a newline and bytes outside ASCII made '?'.
    EXPECT_EQ(r->args["oom_error"], "java.lang.OutOfMemoryError made in \"x\"\\y???z");
    EXPECT_EQ(r->args["live"], false);  // garbage is evidence at an OutOfMemoryError
    EXPECT_EQ(r->args["wait"], true);
}

TEST(daemon_request, the_thread_waits_until_the_heap_is_written) {
    auto progress = [](const char* phase) { return wire::make_progress(1, {7, phase, 0, 0}); };
    auto payload = [](const wire::reply& r) {
        const std::string frame = *wire::encode_reply(r);
        return frame.substr(4);
    };
    EXPECT_EQ(read_reply(payload(progress("prepare"))), reply_meaning::waiting);
    EXPECT_EQ(read_reply(payload(progress("waiting for the JVM"))), reply_meaning::waiting);
    EXPECT_EQ(read_reply(payload(progress("dump"))), reply_meaning::waiting);
    EXPECT_EQ(read_reply(payload(progress("index"))), reply_meaning::written);
    EXPECT_EQ(read_reply(payload(wire::make_result(1, {{"job", 7}}))), reply_meaning::written);
    EXPECT_EQ(read_reply(payload(wire::make_error(1, wire::error_kind::busy, "too many"))), reply_meaning::failed);
    EXPECT_EQ(read_reply("not json"), reply_meaning::failed);
}

TEST(daemon_request, no_daemon_is_said_not_waited_for) {
    const std::string why = ask_for_dump("/nonexistent/heapd.sock", dump_request_frame(1, 1, "thrown", ""), 5);
    EXPECT_NE(why.find("cannot reach heapd at /nonexistent/heapd.sock"), std::string::npos) << why;
}

}  // namespace
}  // namespace heapd::agent
