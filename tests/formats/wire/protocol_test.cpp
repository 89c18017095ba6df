// The wire protocol between heapd and heapctl: frames, requests and replies both ways, and every
// kind of bad input turned into an error value.
#include "formats/wire/protocol.h"
#include "formats/wire/error_kinds.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace heapd::wire {
namespace {

std::string payload_of(const std::string& frame) { return frame.substr(frame_header_bytes); }

TEST(protocol, a_frame_is_a_big_endian_length_then_the_json) {
    auto f = encode_frame(json{{"a", 1}});
    ASSERT_TRUE(f.has_value());
    ASSERT_EQ(f->size(), 4u + 7u);
    EXPECT_EQ(f->substr(0, 4), std::string("\0\0\0\x07", 4));
    EXPECT_EQ(payload_of(*f), R"({"a":1})");
    std::byte header[4] = {std::byte{0x01}, std::byte{0x02}, std::byte{0x03}, std::byte{0x04}};
    EXPECT_EQ(decode_frame_length(std::span<const std::byte, 4>(header), 0xffffffffu).value(), 0x01020304u);
}

TEST(protocol, requests_round_trip) {
    request r{42, "analyze", json{{"name", "x.hprof"}, {"top", 5}, {"wait", true}}};
    auto f = encode_request(r);
    ASSERT_TRUE(f.has_value());
    auto back = decode_request(payload_of(*f));
    ASSERT_TRUE(back.has_value()) << back.error().message;
    EXPECT_EQ(back->id, 42u);
    EXPECT_EQ(back->type, "analyze");
    EXPECT_EQ(back->args, r.args);
    // A request without args has empty ones.
    auto bare = decode_request(R"({"v":1,"id":3,"type":"status"})");
    ASSERT_TRUE(bare.has_value());
    EXPECT_TRUE(bare->args.is_object() && bare->args.empty());
}

// Version 1 named the analysis of a passed dump "analyse": such a request is read as "analyze" and
// remembers its version, so that its replies go out in version 1; version 2 knows only "analyze".
TEST(protocol, a_version_1_request_is_read_and_answered_in_version_1) {
    auto old = decode_request(R"({"v":1,"id":5,"type":"analyse","args":{"name":"x.hprof"}})");
    ASSERT_TRUE(old.has_value()) << old.error().message;
    EXPECT_EQ(old->type, "analyze");
    EXPECT_EQ(old->version, 1u);
    auto now = decode_request(R"({"v":2,"id":5,"type":"analyse"})");
    ASSERT_TRUE(now.has_value());
    EXPECT_EQ(now->type, "analyse");  // no such request in version 2: the daemon answers unknown_type
    EXPECT_EQ(now->version, 2u);

    reply r = make_result(5, json{{"a", 1}});
    r.version = old->version;
    const auto frame = encode_reply(r);
    ASSERT_TRUE(frame.has_value());
    EXPECT_EQ(json::parse(payload_of(*frame)).at("v"), 1);
    EXPECT_EQ(json::parse(payload_of(*encode_reply(make_result(5, {})))).at("v"), protocol_version);
    EXPECT_EQ(decode_reply(payload_of(*frame))->version, 1u);
}

TEST(protocol, replies_round_trip) {
    auto result = decode_reply(payload_of(*encode_reply(make_result(7, json{{"jobs", json::array()}}))));
    ASSERT_TRUE(result.has_value());
    EXPECT_EQ(result->id, 7u);
    EXPECT_EQ(result->kind, reply_kind::result);
    EXPECT_EQ(result->result, (json{{"jobs", json::array()}}));

    auto error = decode_reply(payload_of(*encode_reply(make_error(8, error_kind::permission_denied, "not yours"))));
    ASSERT_TRUE(error.has_value());
    EXPECT_EQ(error->kind, reply_kind::error);
    EXPECT_EQ(error->error.kind, error_kind::permission_denied);
    EXPECT_EQ(error->error.message, "not yours");

    auto progress = decode_reply(payload_of(*encode_reply(make_progress(9, {3, "dominators", 500, 1000}))));
    ASSERT_TRUE(progress.has_value());
    EXPECT_EQ(progress->kind, reply_kind::progress);
    EXPECT_EQ(progress->progress.job, 3u);
    EXPECT_EQ(progress->progress.phase, "dominators");
    EXPECT_EQ(progress->progress.done, 500u);
    EXPECT_EQ(progress->progress.total, 1000u);
}

TEST(protocol, every_error_kind_has_a_name_that_reads_back) {
    for (int k = 0; k <= static_cast<int>(error_kind::internal); ++k) {
        auto kind = static_cast<error_kind>(k);
        EXPECT_EQ(error_kind_from_name(error_kind_name(kind)), kind) << error_kind_name(kind);
    }
    EXPECT_EQ(error_kind_from_name("a_code_from_the_future"), error_kind::other);
}

TEST(error_kinds, each_error_code_becomes_the_kind_a_client_acts_on) {
    EXPECT_EQ(wire::kind_of(error_code::no_space), error_kind::no_space);
    EXPECT_EQ(wire::kind_of(error_code::busy), error_kind::busy);
    EXPECT_EQ(wire::kind_of(error_code::internal), error_kind::internal);
    EXPECT_EQ(wire::kind_of(error_code::cancelled), error_kind::cancelled);
    EXPECT_EQ(wire::kind_of(error_code::bad_magic), error_kind::bad_input);
    EXPECT_EQ(wire::kind_of(error_code::no_such_process), error_kind::not_found);
    for (error_code failed : {error_code::jvm_refused, error_code::crashed, error_code::out_of_memory,
                              error_code::not_responding, error_code::timed_out})
        EXPECT_EQ(wire::kind_of(failed), error_kind::failed) << error_code_name(failed);
}

TEST(protocol, malformed_requests_are_errors_with_the_id_when_known) {
    struct bad {
        const char* payload;
        error_kind kind;
        std::uint64_t id;
    };
    const bad cases[] = {
        {"", error_kind::bad_request, 0},
        {"not json", error_kind::bad_request, 0},
        {"[1,2,3]", error_kind::bad_request, 0},
        {"\"text\"", error_kind::bad_request, 0},
        {R"({"v":1,"type":"status"})", error_kind::bad_request, 0},
        {R"({"v":1,"id":"7","type":"status"})", error_kind::bad_request, 0},
        {R"({"v":1,"id":-7,"type":"status"})", error_kind::bad_request, 0},
        {R"({"v":1,"id":7.5,"type":"status"})", error_kind::bad_request, 0},
        {R"({"id":7,"type":"status"})", error_kind::bad_request, 7},
        {R"({"v":"1","id":7,"type":"status"})", error_kind::bad_request, 7},
        {R"({"v":3,"id":7,"type":"status"})", error_kind::unsupported_version, 7},
        {R"({"v":0,"id":7,"type":"status"})", error_kind::unsupported_version, 7},
        {R"({"v":1,"id":7})", error_kind::bad_request, 7},
        {R"({"v":1,"id":7,"type":5})", error_kind::bad_request, 7},
        {R"({"v":1,"id":7,"type":""})", error_kind::bad_request, 7},
        {R"({"v":1,"id":7,"type":"status","args":[]})", error_kind::bad_request, 7},
        {R"({"v":1,"id":7,"type":"status","args":"x"})", error_kind::bad_request, 7},
        {"{\"v\":1,\"id\":7,\"type\":\"st\xff\xfe\"}", error_kind::bad_request, 0},  // not UTF-8
        {R"({"v":1,"id":7,"type":"status")", error_kind::bad_request, 0},            // cut short
    };
    for (const bad& c : cases) {
        auto r = decode_request(c.payload);
        ASSERT_FALSE(r.has_value()) << c.payload;
        EXPECT_EQ(r.error().kind, c.kind) << c.payload << ": " << r.error().message;
        EXPECT_EQ(r.error().id, c.id) << c.payload;
        EXPECT_FALSE(r.error().message.empty());
    }
    auto long_type = decode_request(R"({"v":1,"id":1,"type":")" + std::string(65, 't') + "\"}");
    ASSERT_FALSE(long_type.has_value());
    EXPECT_EQ(long_type.error().kind, error_kind::bad_request);
}

TEST(protocol, deep_nesting_is_refused_before_parsing) {
    std::string deep =
        R"({"v":1,"id":1,"type":"status","args":{"x":)" + std::string(100000, '[') + std::string(100000, ']') + "}}";
    EXPECT_EQ(json_depth(deep), 100002u);
    auto r = decode_request(deep);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().kind, error_kind::bad_request);
    EXPECT_NE(r.error().message.find("nested"), std::string::npos);
    // Brackets inside strings do not count.
    EXPECT_EQ(json_depth(R"({"a":"[[[[\"[[[["})"), 1u);
}

TEST(protocol, malformed_replies_are_errors) {
    const char* cases[] = {
        R"({"v":1,"id":1,"type":"result"})",
        R"({"v":1,"id":1,"type":"result","result":[1]})",
        R"({"v":1,"id":1,"type":"error"})",
        R"({"v":1,"id":1,"type":"error","error":{"code":"busy"}})",
        R"({"v":1,"id":1,"type":"error","error":{"code":3,"message":"m"}})",
        R"({"v":1,"id":1,"type":"progress","progress":{"job":1,"phase":"x","done":1}})",
        R"({"v":1,"id":1,"type":"progress","progress":{"job":1,"phase":2,"done":1,"total":2}})",
        R"({"v":1,"id":1,"type":"progress","progress":{"job":-1,"phase":"x","done":1,"total":2}})",
        R"({"v":1,"id":1,"type":"progress","progress":7})",
        R"({"v":1,"id":1,"type":"whatever"})",
        R"({"v":9,"id":1,"type":"result","result":{}})",
    };
    for (const char* c : cases) {
        auto r = decode_reply(c);
        EXPECT_FALSE(r.has_value()) << c;
    }
    EXPECT_EQ(decode_reply(R"({"v":1,"id":1,"type":"whatever"})").error().kind, error_kind::unknown_type);
    EXPECT_EQ(decode_reply(R"({"v":9,"id":1,"type":"result","result":{}})").error().kind,
              error_kind::unsupported_version);
    // An error code from a newer daemon still reads, as other.
    auto newer = decode_reply(R"({"v":1,"id":1,"type":"error","error":{"code":"quota","message":"m"}})");
    ASSERT_TRUE(newer.has_value());
    EXPECT_EQ(newer->error.kind, error_kind::other);
}

TEST(protocol, oversized_messages_are_refused_both_ways) {
    auto big = encode_frame(json{{"x", std::string(200, 'a')}}, 100);
    ASSERT_FALSE(big.has_value());
    EXPECT_EQ(big.error().kind, error_kind::too_large);
    std::byte header[4] = {std::byte{0x01}, std::byte{0x00}, std::byte{0x00}, std::byte{0x01}};  // 16 MiB + 1
    auto n = decode_frame_length(std::span<const std::byte, 4>(header));
    ASSERT_FALSE(n.has_value());
    EXPECT_EQ(n.error().kind, error_kind::too_large);
    std::byte exact[4] = {std::byte{0x01}, std::byte{0x00}, std::byte{0x00}, std::byte{0x00}};  // 16 MiB
    EXPECT_EQ(decode_frame_length(std::span<const std::byte, 4>(exact)).value(), max_message_bytes);
}

TEST(protocol, invalid_utf8_is_replaced_when_encoding) {
    auto f = encode_request({1, "analyze", json{{"name", std::string("dump-\xff.hprof")}}});
    ASSERT_TRUE(f.has_value());
    auto back = decode_request(payload_of(*f));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->args["name"], "dump-\xef\xbf\xbd.hprof");
}

TEST(frame_parser, splits_a_stream_fed_in_any_pieces) {
    std::string stream = *encode_frame(json{{"n", 1}}) + *encode_frame(json{{"n", 2}}) + *encode_frame(json{{"n", 3}});
    for (std::size_t piece : {std::size_t{1}, std::size_t{3}, std::size_t{5}, stream.size()}) {
        frame_parser p;
        std::vector<std::string> got;
        for (std::size_t at = 0; at < stream.size(); at += piece) {
            ASSERT_TRUE(p.feed(std::string_view(stream).substr(at, piece)).has_value());
            while (auto m = p.next()) got.push_back(*m);
        }
        EXPECT_EQ(got, (std::vector<std::string>{R"({"n":1})", R"({"n":2})", R"({"n":3})"})) << piece;
        EXPECT_FALSE(p.partial());
    }
}

TEST(frame_parser, knows_a_partial_frame) {
    frame_parser p;
    std::string f = *encode_frame(json{{"n", 1}});
    ASSERT_TRUE(p.feed(std::string_view(f).substr(0, 2)).has_value());
    EXPECT_TRUE(p.partial());
    EXPECT_FALSE(p.next().has_value());
    ASSERT_TRUE(p.feed(std::string_view(f).substr(2)).has_value());
    EXPECT_TRUE(p.next().has_value());
    EXPECT_FALSE(p.partial());
}

TEST(frame_parser, an_oversized_header_fails_at_once_and_for_good) {
    frame_parser p(1000);
    std::string good = *encode_frame(json{{"n", 1}});
    std::string huge = std::string("\x7f\xff\xff\xff", 4);
    auto r = p.feed(good + huge);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().kind, error_kind::too_large);
    EXPECT_FALSE(p.feed(good).has_value());
    EXPECT_FALSE(p.next().has_value());
}

TEST(frame_parser, an_empty_frame_is_an_empty_payload_that_decodes_to_an_error) {
    frame_parser p;
    ASSERT_TRUE(p.feed(std::string("\0\0\0\0", 4)).has_value());
    auto m = p.next();
    ASSERT_TRUE(m.has_value());
    EXPECT_TRUE(m->empty());
    EXPECT_EQ(decode_request(*m).error().kind, error_kind::bad_request);
}

TEST(protocol, arguments_are_read_with_their_types_checked) {
    json args = {{"n", 5}, {"neg", -1}, {"s", "x"}, {"b", true}, {"f", 1.5}, {"null", nullptr}};
    EXPECT_EQ(arg_uint(args, "n", std::nullopt).value(), 5u);
    EXPECT_EQ(arg_uint(args, "missing", 9).value(), 9u);
    EXPECT_EQ(arg_uint(args, "null", 9).value(), 9u);
    EXPECT_FALSE(arg_uint(args, "missing", std::nullopt).has_value());
    EXPECT_FALSE(arg_uint(args, "neg", 0).has_value());
    EXPECT_FALSE(arg_uint(args, "f", 0).has_value());
    EXPECT_FALSE(arg_uint(args, "s", 0).has_value());
    EXPECT_EQ(arg_string(args, "s", std::nullopt).value(), "x");
    EXPECT_FALSE(arg_string(args, "n", std::nullopt).has_value());
    EXPECT_EQ(arg_string(args, "missing", "d").value(), "d");
    EXPECT_TRUE(arg_bool(args, "b", false).value());
    EXPECT_FALSE(arg_bool(args, "missing", false).value());
    EXPECT_FALSE(arg_bool(args, "n", false).has_value());
}

// Random bytes and random mutations of good messages never crash and never throw.
TEST(protocol, random_input_gives_values_or_errors) {
    std::mt19937 rng(12345);
    std::string good = payload_of(*encode_request({5, "analyze", json{{"name", "a"}, {"top", 3}}}));
    for (int i = 0; i < 20000; ++i) {
        std::string s;
        if (i % 2 == 0) {
            s = good;
            for (int k = 0; k < 3; ++k) s[rng() % s.size()] = static_cast<char>(rng());
        } else {
            s.resize(rng() % 64);
            for (char& c : s) c = static_cast<char>(rng());
        }
        EXPECT_NO_THROW({
            (void)decode_request(s);
            (void)decode_reply(s);
        });
        frame_parser p(256);
        EXPECT_NO_THROW({
            if (p.feed(s))
                while (p.next()) {}
        });
    }
}

}  // namespace
}  // namespace heapd::wire
