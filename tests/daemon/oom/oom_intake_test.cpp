// The OOM intake (daemon/oom/oom_intake.h): records written durably and read back after a restart
// of the daemon, dropped when done; keys made only of a writer and an id that is no path; one
// writer's flood bounded without touching another's; damaged records removed and reported.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "daemon/oom/oom_intake.h"
#include "support/jvm_process.h"

namespace heapd::test {
namespace {

namespace fs = std::filesystem;
using daemon::intake_record;
using daemon::oom_intake;

intake_record record(uid_t writer, const std::string& id) {
    intake_record r;
    r.key = *daemon::intake_key(writer, id);
    r.writer_uid = writer;
    r.writer_gid = writer;
    r.args = {{"pid", 42}, {"trigger", "oom"}, {"in_oom_hook", true}, {"dump_path", "/tmp/x.hprof"}};
    r.received_ms = 1234;
    return r;
}

TEST(oom_intake, keys_are_a_writer_and_an_id_that_is_no_path) {
    EXPECT_EQ(daemon::intake_key(1000, "0123abcd"), "1000-0123abcd");
    EXPECT_EQ(daemon::intake_key(0, "spool-dump-17-42"), "0-spool-dump-17-42");
    EXPECT_FALSE(daemon::intake_key(1000, ""));
    EXPECT_FALSE(daemon::intake_key(1000, "../../etc/passwd"));
    EXPECT_FALSE(daemon::intake_key(1000, "a/b"));
    EXPECT_FALSE(daemon::intake_key(1000, std::string(49, 'a')));
    const std::string id = daemon::new_request_id();
    EXPECT_EQ(id.size(), 32u);
    EXPECT_NE(id, daemon::new_request_id());
    EXPECT_TRUE(daemon::intake_key(1000, id));
}

TEST(oom_intake, records_survive_a_restart_until_dropped) {
    scratch_dir dir;
    const std::string at = dir.file("intake");
    std::vector<intake_record> found;
    std::vector<std::string> problems;
    {
        auto intake = oom_intake::open(at, {}, found, problems);
        ASSERT_TRUE(intake) << intake.error().message;
        EXPECT_TRUE(found.empty());
        intake_record a = record(1000, "aaaa");
        intake_record b = record(1001, "bbbb");
        ASSERT_TRUE(intake->keep(a));
        ASSERT_TRUE(intake->keep(b));
        a.attempts = 2;
        a.last_error = "no space";
        a.dump_ino = 77;
        ASSERT_TRUE(intake->keep(a));  // rewritten, not added
        EXPECT_EQ(intake->size(), 2u);
        EXPECT_TRUE(intake->contains("1000-aaaa"));
    }
    std::ofstream(at + "/1000-cccc.json") << "{\"key\": \"1000-cccc\"";                  // cut short
    std::ofstream(at + "/1000-dddd.json") << daemon::to_json(record(0, "dddd")).dump();  // another's name
    std::ofstream(at + "/.tmp-1000-eeee.json-x") << "{";                                 // half written
    auto again = oom_intake::open(at, {}, found, problems);
    ASSERT_TRUE(again);
    ASSERT_EQ(found.size(), 2u);
    EXPECT_EQ(found[0].key, "1000-aaaa");
    EXPECT_EQ(found[0].attempts, 2u);
    EXPECT_EQ(found[0].last_error, "no space");
    EXPECT_EQ(found[0].dump_ino, 77u);
    EXPECT_EQ(found[0].args["dump_path"], "/tmp/x.hprof");
    EXPECT_EQ(found[1].writer_uid, 1001u);
    EXPECT_EQ(problems.size(), 2u);
    EXPECT_FALSE(fs::exists(at + "/1000-cccc.json"));
    EXPECT_FALSE(fs::exists(at + "/1000-dddd.json"));
    EXPECT_FALSE(fs::exists(at + "/.tmp-1000-eeee.json-x"));
    again->drop("1000-aaaa");
    EXPECT_FALSE(again->contains("1000-aaaa"));
    found.clear();
    auto third = oom_intake::open(at, {}, found, problems);
    ASSERT_TRUE(third);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].key, "1001-bbbb");
}

TEST(oom_intake, one_writers_flood_is_bounded_and_leaves_room_for_others) {
    scratch_dir dir;
    std::vector<intake_record> found;
    std::vector<std::string> problems;
    auto intake = oom_intake::open(dir.file("intake"), {}, found, problems);
    ASSERT_TRUE(intake);
    for (std::size_t i = 0; i < oom_intake::max_per_writer; ++i)
        ASSERT_TRUE(intake->keep(record(2000, "r" + std::to_string(i))));
    auto refused = intake->keep(record(2000, "one-more"));
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, error_code::busy);
    EXPECT_NE(refused.error().message.find("uid 2000"), std::string::npos) << refused.error().message;
    EXPECT_TRUE(intake->keep(record(2001, "victim")));
    intake->drop("2000-r0");
    EXPECT_TRUE(intake->keep(record(2000, "one-more")));
}

}  // namespace
}  // namespace heapd::test
