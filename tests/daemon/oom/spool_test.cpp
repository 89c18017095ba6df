// The spool of dump requests: written whole under a new name, read back with who wrote it and left
// in place until removed (the daemon removes a file once its OOM intake holds the request); what is
// not a request is removed and reported, what is being written is left alone; the directory is made
// 1733.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "daemon/oom/spool.h"
#include "support/jvm_process.h"

namespace heapd::test {
namespace {

namespace fs = std::filesystem;
using wire::json;

TEST(spool, requests_round_trip_and_stay_until_removed) {
    scratch_dir dir;
    const std::string spool = dir.file("spool");
    ASSERT_TRUE(daemon::make_spool_dir(spool));
    struct stat st {};
    ASSERT_EQ(::stat(spool.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 01733u);

    auto a = daemon::spool_request(spool, {{"pid", 42}, {"trigger", "oom"}, {"dump_path", "/tmp/java_pid42.hprof"}});
    auto b = daemon::spool_request(spool, {{"pid", 43}, {"trigger", "oom"}, {"request_id", "abc"}});
    ASSERT_TRUE(a && b);
    EXPECT_NE(*a, *b);
    ASSERT_EQ(::stat(a->c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    std::ofstream(spool + "/garbage.json") << "{not json";
    std::ofstream(spool + "/.tmp-half.json") << "{\"pid\":";

    std::vector<std::string> problems;
    auto taken = daemon::read_spool(spool, problems);
    ASSERT_EQ(taken.size(), 2u);
    EXPECT_EQ(daemon::read_spool(spool, problems).size(), 2u);  // read, not taken
    std::set<long long> pids;
    for (const auto& r : taken) {
        pids.insert(r.args["pid"].get<long long>());
        EXPECT_EQ(r.writer_uid, ::geteuid());
        EXPECT_EQ(r.args["trigger"], "oom");
    }
    EXPECT_EQ(pids, (std::set<long long>{42, 43}));
    for (const auto& r : taken) {
        // The hook's id, else one made of the file's name (a hook of an earlier version).
        const std::string id = daemon::spooled_request_id(r);
        if (r.args["pid"] == 43) {
            EXPECT_EQ(id, "abc");
        } else {
            EXPECT_EQ("/" + id.substr(6) + ".json", r.path.substr(r.path.rfind('/'))) << id;
        }
        daemon::remove_spooled(r);
    }
    EXPECT_EQ(problems.size(), 1u);  // the garbage, removed at the first reading
    EXPECT_FALSE(fs::exists(spool + "/garbage.json"));
    EXPECT_TRUE(fs::exists(spool + "/.tmp-half.json"));  // still being written: left alone
    fs::remove(spool + "/.tmp-half.json");
    EXPECT_TRUE(daemon::read_spool(spool, problems).empty());
}

// A file of another user's that the writer may write (a careless 0666 file), hard-linked into the
// spool with a request in it, is not the request of the file's owner: the link is removed unread,
// the file itself left where it is.
TEST(spool, a_hard_link_is_not_a_request_and_only_the_link_goes) {
    scratch_dir dir;
    const std::string spool = dir.file("spool");
    ASSERT_TRUE(daemon::make_spool_dir(spool));
    const std::string victims = dir.file("victims-file.json");
    std::ofstream(victims) << json{{"pid", 42}, {"trigger", "oom"}, {"oom_kind", "direct-buffer"}}.dump();
    ASSERT_EQ(::link(victims.c_str(), (spool + "/dump-1-forged.json").c_str()), 0);
    std::vector<std::string> problems;
    EXPECT_TRUE(daemon::read_spool(spool, problems).empty());
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].find("a hard link (2 names)"), std::string::npos) << problems[0];
    EXPECT_FALSE(fs::exists(spool + "/dump-1-forged.json"));
    EXPECT_TRUE(fs::exists(victims));
}

TEST(spool, a_missing_spool_is_empty_and_an_unwritable_one_fails) {
    scratch_dir dir;
    std::vector<std::string> problems;
    EXPECT_TRUE(daemon::read_spool(dir.file("none"), problems).empty());
    EXPECT_TRUE(problems.empty());
    auto written = daemon::spool_request(dir.file("none"), {{"pid", 1}});
    ASSERT_FALSE(written);
    EXPECT_NE(written.error().message.find("cannot create"), std::string::npos) << written.error().message;
}

}  // namespace
}  // namespace heapd::test
