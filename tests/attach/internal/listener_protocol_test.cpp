// The HotSpot attach protocol against scripted listeners in this process: the exact bytes of v1
// and v2 requests (JDK 24's size-prefixed form, JDK 25's options), the getversion probe, streamed
// replies, and every way a listener can fail to answer, each ending within its timeout.
#include <gtest/gtest.h>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "attach/attach_client.h"
#include "attach/attach_test_util.h"
#include "attach/internal/listener_protocol.h"
#include "support/jvm_process.h"

namespace heapd::test {
namespace {

using namespace std::string_literals;
using attach::attach_options;
using attach::protocol_choice;

// A scripted attach listener on a unix socket in a thread of the test: each connection's request
// is read whole (v1 or v2 framing) and kept, then handled by the next step of the script.
class fake_listener {
public:
    using step = std::function<void(int fd, const std::atomic<bool>& stop)>;

    fake_listener(std::string path, std::vector<step> script) : path_(std::move(path)), script_(std::move(script)) {
        fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        path_.copy(addr.sun_path, sizeof addr.sun_path - 1);
        if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 5) != 0)
            ADD_FAILURE() << "cannot listen on " << path_;
        thread_ = std::thread([this] { serve(); });
    }
    ~fake_listener() {
        stop_ = true;
        thread_.join();
        ::close(fd_);
        ::unlink(path_.c_str());
    }
    std::vector<std::string> requests() {
        std::lock_guard lock(mutex_);
        return requests_;
    }

private:
    void serve() {
        for (const step& handle : script_) {
            int client = -1;
            while (client < 0 && !stop_) {
                pollfd p{fd_, POLLIN, 0};
                if (::poll(&p, 1, 50) > 0) client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
            }
            if (client < 0) return;
            std::string request = read_request(client);
            {
                std::lock_guard lock(mutex_);
                requests_.push_back(request);
            }
            handle(client, stop_);
            ::close(client);
        }
    }

    // Reads "<ver>\0" then three more strings (v1) or "<size>\0" and size bytes (v2).
    static std::string read_request(int fd) {
        std::string r;
        auto next = [&]() -> bool {
            pollfd p{fd, POLLIN, 0};
            char c;
            if (::poll(&p, 1, 5000) <= 0 || ::read(fd, &c, 1) != 1) return false;
            r.push_back(c);
            return true;
        };
        auto read_string = [&]() -> bool {
            while (next())
                if (r.back() == '\0') return true;
            return false;
        };
        if (!read_string()) return r;
        if (r == "1\0"s) {
            for (int i = 0; i < 4 && read_string(); ++i) {}
        } else if (r == "2\0"s) {
            std::size_t before = r.size();
            if (!read_string()) return r;
            std::size_t size = std::stoul(r.substr(before));
            while (size-- > 0 && next()) {}
        }
        return r;
    }

    std::string path_;
    std::vector<step> script_;
    int fd_ = -1;
    std::atomic<bool> stop_{false};
    std::thread thread_;
    std::mutex mutex_;
    std::vector<std::string> requests_;
};

void write_text(int fd, const std::string& s) {
    EXPECT_EQ(::write(fd, s.data(), s.size()), static_cast<ssize_t>(s.size()));
}

// Answers with the whole reply and closes.
fake_listener::step reply(std::string bytes) {
    return [bytes](int fd, const std::atomic<bool>&) { write_text(fd, bytes); };
}
// Answers in pieces with pauses between them, as a streaming JVM does.
fake_listener::step stream(std::vector<std::string> pieces, int pause_ms) {
    return [pieces, pause_ms](int fd, const std::atomic<bool>&) {
        for (std::size_t i = 0; i < pieces.size(); ++i) {
            if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
            write_text(fd, pieces[i]);
        }
    };
}
// Writes `first` (maybe nothing), then holds the connection open without a word until the test ends.
fake_listener::step fall_silent(std::string first = "") {
    return [first](int fd, const std::atomic<bool>& stop) {
        if (!first.empty()) write_text(fd, first);
        for (int i = 0; i < 400 && !stop; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(25));
    };
}

const std::string probe = "1\0getversion\0options\0\0\0"s;
const std::string old_jvm = "-1\nOperation getversion not recognized!"s;

TEST(listener_protocol, encodes_v1_as_hotspot_reads_it) {
    EXPECT_EQ(attach::encode_v1({"threaddump", {}}), "1\0threaddump\0\0\0\0"s);
    EXPECT_EQ(attach::encode_v1({"dumpheap", {"/tmp/x.hprof", "-all", "3"}}),
              "1\0dumpheap\0/tmp/x.hprof\0-all\0003\0"s);
    EXPECT_EQ(attach::encode_v1({"a", {"1", "2", "3", "4"}}), "");         // four arguments
    EXPECT_EQ(attach::encode_v1({"jcmd", {std::string(1025, 'x')}}), "");  // longer than 1024
    EXPECT_EQ(attach::encode_v1({"a-name-of-17-char", {}}), "");           // name longer than 16
}

TEST(listener_protocol, encodes_v2_with_its_size_and_options) {
    std::string data = "jcmd\0Thread.print\0"s;
    EXPECT_EQ(attach::encode_v2({"jcmd", {"Thread.print"}}, ""), "2\0"s + std::to_string(data.size()) + "\0"s + data);
    std::string with = "jcmd streaming=1\0VM.flags\0"s;
    EXPECT_EQ(attach::encode_v2({"jcmd", {"VM.flags"}}, "streaming=1"),
              "2\0"s + std::to_string(with.size()) + "\0"s + with);
    EXPECT_FALSE(attach::check_request({"jcmd", {"a\0b"s}}));
    EXPECT_FALSE(attach::check_request({"", {}}));
}

TEST(listener_protocol, speaks_v2_with_streaming_to_a_jdk25_listener) {
    scratch_dir dir;
    fake_listener listener(dir.file("java_pid"),
                           {reply("0\n2 streaming"), stream({"0\nfirst part ", "second part"}, 300)});
    attach_options options;
    options.streaming = true;
    std::vector<std::string> pieces;
    options.on_output = [&](std::string_view s) { pieces.emplace_back(s); };
    auto r = attach::attach_socket(dir.file("java_pid"), {"jcmd", {"Thread.print -l"}}, options);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->status, 0);
    EXPECT_EQ(r->protocol, 2);
    EXPECT_GE(pieces.size(), 2u);  // the output arrived as it was written
    std::string joined;
    for (const auto& p : pieces) joined += p;
    EXPECT_EQ(joined, "first part second part");
    auto requests = listener.requests();
    ASSERT_EQ(requests.size(), 2u);
    EXPECT_EQ(requests[0], probe);
    std::string data = "jcmd streaming=1\0Thread.print -l\0"s;
    EXPECT_EQ(requests[1], "2\0"s + std::to_string(data.size()) + "\0"s + data);
}

TEST(listener_protocol, sends_no_options_to_a_jdk24_listener) {
    scratch_dir dir;
    fake_listener listener(dir.file("java_pid"), {reply("0\n2"), reply("0\ndone")});
    attach_options options;
    options.streaming = true;  // not offered: not sent
    auto r = attach::attach_socket(dir.file("java_pid"), {"jcmd", {"VM.flags"}}, options);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->output, "done");
    EXPECT_EQ(r->protocol, 2);
    std::string data = "jcmd\0VM.flags\0"s;
    EXPECT_EQ(listener.requests().at(1), "2\0"s + std::to_string(data.size()) + "\0"s + data);
}

TEST(listener_protocol, carries_many_and_long_arguments_only_in_v2) {
    scratch_dir dir;
    std::vector<std::string> args = {"a", "b", "c", "d", std::string(3000, 'e')};
    {
        fake_listener v2(dir.file("v2"), {reply("0\n2"), reply("0\nok")});
        auto r = attach::attach_socket(dir.file("v2"), {"many", args});
        ASSERT_TRUE(r) << r.error().message;
        std::string data = "many\0a\0b\0c\0d\0"s + std::string(3000, 'e') + "\0"s;
        EXPECT_EQ(v2.requests().at(1), "2\0"s + std::to_string(data.size()) + "\0"s + data);
    }
    fake_listener v1(dir.file("v1"), {reply(old_jvm)});
    auto r = attach::attach_socket(dir.file("v1"), {"many", args});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, error_code::protocol);
    EXPECT_NE(r.error().message.find("needs attach protocol v2"), std::string::npos) << r.error().message;
    EXPECT_EQ(v1.requests().size(), 1u);  // the probe only
}

TEST(listener_protocol, falls_back_to_v1_for_a_jvm_that_does_not_know_getversion) {
    scratch_dir dir;
    fake_listener listener(dir.file("java_pid"), {reply(old_jvm), reply("0\nFull thread dump")});
    auto r = attach::attach_socket(dir.file("java_pid"), {"threaddump", {}});
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->protocol, 1);
    EXPECT_EQ(r->output, "Full thread dump");
    EXPECT_EQ(listener.requests().at(1), "1\0threaddump\0\0\0\0"s);
}

TEST(listener_protocol, forced_protocols) {
    scratch_dir dir;
    {
        fake_listener listener(dir.file("a"), {reply("-1\nOperation x not recognized!")});
        attach_options options;
        options.protocol = protocol_choice::v1;
        auto r = attach::attach_socket(dir.file("a"), {"x", {"1"}}, options);
        ASSERT_TRUE(r) << r.error().message;
        EXPECT_EQ(r->status, -1);
        EXPECT_EQ(r->output, "Operation x not recognized!");
        EXPECT_EQ(listener.requests(), std::vector<std::string>{"1\0x\0001\0\0\0"s});  // no probe
    }
    fake_listener listener(dir.file("b"), {reply(old_jvm)});
    attach_options options;
    options.protocol = protocol_choice::v2;
    auto r = attach::attach_socket(dir.file("b"), {"x", {}}, options);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, error_code::protocol);
}

TEST(listener_protocol, a_silent_listener_ends_in_not_responding_within_the_timeout) {
    scratch_dir dir;
    attach_options options;
    options.timeout = std::chrono::milliseconds(500);
    {
        fake_listener listener(dir.file("probe"), {fall_silent()});
        stopwatch clock;
        auto r = attach::attach_socket(dir.file("probe"), {"threaddump", {}}, options);
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code, error_code::not_responding) << r.error().message;
        EXPECT_LT(clock.seconds(), 0.5 + 5);
    }
    {
        // Silent after accepting the request itself.
        fake_listener listener(dir.file("request"), {reply(old_jvm), fall_silent()});
        stopwatch clock;
        auto r = attach::attach_socket(dir.file("request"), {"threaddump", {}}, options);
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code, error_code::not_responding) << r.error().message;
        EXPECT_LT(clock.seconds(), 2 * 0.5 + 5);
    }
    // A streamed reply that stops half way.
    fake_listener listener(dir.file("stall"), {reply(old_jvm), fall_silent("0\nhalf a thread dump")});
    stopwatch clock;
    auto r = attach::attach_socket(dir.file("stall"), {"threaddump", {}}, options);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, error_code::not_responding);
    EXPECT_NE(r.error().message.find("did not finish its reply"), std::string::npos) << r.error().message;
    EXPECT_LT(clock.seconds(), 2 * 0.5 + 5);
}

TEST(listener_protocol, malformed_answers_are_protocol_errors) {
    scratch_dir dir;
    int n = 0;
    for (std::string answer : {"abc\nxyz"s, "101\nv2 is unsupported or disabled"s, ""s, std::string(40, '7')}) {
        std::string path = dir.file("l" + std::to_string(n++));
        fake_listener listener(path, {reply(old_jvm), reply(answer)});
        auto r = attach::attach_socket(path, {"threaddump", {}});
        ASSERT_FALSE(r) << "answer " << answer;
        EXPECT_EQ(r.error().code, error_code::protocol) << r.error().message;
    }
}

TEST(listener_protocol, no_listener) {
    scratch_dir dir;
    auto missing = attach::attach_socket(dir.file("none"), {"threaddump", {}});
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code, error_code::not_responding);
    // A socket file nobody listens on any more.
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    dir.file("stale").copy(addr.sun_path, sizeof addr.sun_path - 1);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ::close(fd);
    auto stale = attach::attach_socket(dir.file("stale"), {"threaddump", {}});
    ASSERT_FALSE(stale);
    EXPECT_EQ(stale.error().code, error_code::not_responding);
    EXPECT_NE(stale.error().message.find("nothing listens"), std::string::npos) << stale.error().message;
}

}  // namespace
}  // namespace heapd::test
