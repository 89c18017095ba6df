// The daemon's store: atomic entries, recovery after a crash, permissions, retention and the
// free-space guard.
#include "daemon/store/store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "daemon/store/free_space.h"
#include "formats/report/report_json.h"
#include "support/jvm_process.h"

namespace heapd::daemon {
namespace {

namespace fs = std::filesystem;
using test::scratch_dir;

constexpr gid_t some_group = 1;  // "daemon" on Debian: any group other than root's will do

store_options options_in(const scratch_dir& dir) {
    store_options o;
    o.root = dir.file("store");
    o.access.group = some_group;
    o.access.chown = ::geteuid() == 0;
    return o;
}

analysis_report small_report(const std::string& file) {
    analysis_report r;
    r.summary.file = file;
    r.summary.format = "JAVA PROFILE 1.0.2";
    r.summary.id_size = 8;
    r.summary.instances = 3;
    r.histogram = {{0x100, "demo.Thing", 3, 72}};
    return r;
}

entry_metadata meta_for(std::uint64_t job, std::int64_t created_ms, uid_t owner = 1000) {
    entry_metadata m;
    m.created_ms = created_ms;
    m.owner_uid = owner;
    m.owner_gid = owner;
    m.trigger = "heapctl report";
    m.source = "file";
    m.file = "/tmp/x.hprof";
    m.file_bytes = 1234;
    m.job = job;
    return m;
}

std::string add_entry(store& s, std::uint64_t job, std::int64_t created_ms = 1700000000000) {
    auto staged = s.stage(meta_for(job, created_ms));
    EXPECT_TRUE(staged.has_value());
    EXPECT_TRUE(staged->write("report.json", to_json(small_report("/tmp/x.hprof")).dump()).has_value());
    auto committed = staged->commit();
    EXPECT_TRUE(committed.has_value()) << committed.error().message;
    return committed ? committed->id : "";
}

std::unique_ptr<store> open_store(const store_options& o, store_recovery& rec) {
    auto s = store::open(o, rec);
    EXPECT_TRUE(s.has_value()) << s.error().message;
    return s ? std::move(*s) : nullptr;
}

bool any_temp_name(const std::string& root) {
    for (const auto& e : fs::recursive_directory_iterator(root))
        if (e.path().filename().string().starts_with(".tmp-")) return true;
    return false;
}

TEST(store, an_entry_is_written_whole_with_tight_permissions) {
    scratch_dir dir;
    store_recovery rec;
    auto s = open_store(options_in(dir), rec);
    ASSERT_TRUE(s);
    const std::string id = add_entry(*s, 7);
    EXPECT_EQ(id, "20231114T221320-7");
    auto found = s->find(id);
    ASSERT_TRUE(found.has_value());
    EXPECT_TRUE(found->has_report);
    EXPECT_FALSE(found->has_dump);
    EXPECT_GT(found->stored_bytes, 0u);
    auto report = s->load_report(id);
    ASSERT_TRUE(report.has_value()) << report.error().message;
    EXPECT_EQ(report->histogram.at(0).class_name, "demo.Thing");
    for (const char* name : {"metadata.json", "report.json"}) {
        struct stat st {};
        ASSERT_EQ(::stat((s->root() + "/entries/" + id + "/" + name).c_str(), &st), 0);
        EXPECT_EQ(st.st_mode & 0777, 0640u) << name;
        if (::geteuid() == 0) {
            EXPECT_EQ(st.st_uid, 0u);
            EXPECT_EQ(st.st_gid, some_group);
        }
    }
    struct stat st {};
    ASSERT_EQ(::stat((s->root() + "/entries/" + id).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0007, 0u);
    EXPECT_FALSE(any_temp_name(s->root()));
}

TEST(store, a_staged_entry_dropped_before_commit_leaves_nothing) {
    scratch_dir dir;
    store_recovery rec;
    auto s = open_store(options_in(dir), rec);
    {
        auto staged = s->stage(meta_for(3, 1700000000000));
        ASSERT_TRUE(staged.has_value());
        ASSERT_TRUE(staged->write("report.json", "{}").has_value());
    }
    EXPECT_TRUE(s->entries().empty());
    EXPECT_TRUE(fs::is_empty(s->root() + "/entries"));
}

TEST(store, a_second_daemon_cannot_use_the_same_store) {
    scratch_dir dir;
    store_recovery rec;
    auto first = open_store(options_in(dir), rec);
    auto second = store::open(options_in(dir), rec);
    ASSERT_FALSE(second.has_value());
    EXPECT_NE(second.error().message.find("another heapd"), std::string::npos);
}

TEST(store, opening_after_a_crash_removes_what_is_half_written_and_fails_interrupted_jobs) {
    scratch_dir dir;
    const store_options o = options_in(dir);
    std::string good;
    {
        store_recovery rec;
        auto s = open_store(o, rec);
        good = add_entry(*s, 1);
        std::string other = add_entry(*s, 2, 1700000001000);
        auto job = [](std::uint64_t id, job_state state) {
            job_record j;
            j.id = id;
            j.kind = "analyze";
            j.state = state;
            j.created_ms = static_cast<std::int64_t>(id);
            j.started_ms = state == job_state::queued ? 0 : j.created_ms + 1;
            return j;
        };
        job_record done = job(1, job_state::done), running = job(2, job_state::running),
                   queued = job(3, job_state::queued);
        done.entry = good;
        for (const auto& j : {done, running, queued}) ASSERT_TRUE(s->save_job(j).has_value());
        // What a crash leaves: a staged entry, a temporary file in an entry, a scratch file, a half
        // written job record, an entry whose metadata is garbage, one whose report is missing.
        fs::create_directories(o.root + "/entries/.tmp-20231114T221320-9");
        std::ofstream(o.root + "/entries/.tmp-20231114T221320-9/report.json") << "{";
        std::ofstream(o.root + "/entries/" + good + "/.tmp-report.json-Ab12Cd") << "{\"partial";
        std::ofstream(o.root + "/tmp/.heapd-inflate-x") << "junk";
        std::ofstream(o.root + "/jobs/.tmp-4.json-Zz9") << "{";
        fs::create_directories(o.root + "/entries/20231114T221322-5");
        std::ofstream(o.root + "/entries/20231114T221322-5/metadata.json") << "not json";
        fs::remove(o.root + "/entries/" + other + "/report.json");
        std::ofstream(o.root + "/jobs/9.json") << "{\"id\": \"nine\"}";
        // A file someone made world-readable is tightened.
        fs::permissions(o.root + "/entries/" + good + "/report.json", fs::perms(0644));
    }
    store_recovery rec;
    auto s = open_store(o, rec);
    ASSERT_TRUE(s);
    EXPECT_EQ(rec.removed_temp, 4u);
    EXPECT_EQ(rec.removed_corrupt.size(), 1u);  // the damaged job record
    // Garbage metadata, and an entry whose only file is gone: kept aside, never deleted.
    EXPECT_EQ(rec.quarantined.size(), 2u);
    EXPECT_EQ(s->damaged().size(), 2u);
    EXPECT_FALSE(any_temp_name(o.root));
    EXPECT_TRUE(fs::is_empty(o.root + "/tmp"));
    ASSERT_EQ(s->entries().size(), 1u);
    EXPECT_EQ(s->entries()[0].id, good);
    EXPECT_TRUE(s->load_report(good).has_value());
    EXPECT_EQ(fs::status(o.root + "/entries/" + good + "/report.json").permissions() & fs::perms::others_all,
              fs::perms::none);
    ASSERT_EQ(rec.jobs.size(), 3u);
    EXPECT_EQ(rec.interrupted, 2u);
    EXPECT_EQ(rec.jobs[0].state, job_state::done);
    for (int i : {1, 2}) {
        EXPECT_EQ(rec.jobs[i].state, job_state::failed);
        EXPECT_NE(rec.jobs[i].error.find("interrupted"), std::string::npos);
    }
    // The failed state is on disk too: a second restart finds nothing more to repair.
    s.reset();
    store_recovery again;
    auto s2 = open_store(o, again);
    EXPECT_EQ(again.interrupted, 0u);
    EXPECT_EQ(again.removed_temp, 0u);
    EXPECT_TRUE(again.removed_corrupt.empty());
    EXPECT_TRUE(again.quarantined.empty());
    EXPECT_EQ(s2->damaged().size(), 2u);
}

// An entry with both a dump and a report.
std::string add_dump_entry(store& s, std::uint64_t job, std::int64_t created_ms) {
    auto staged = s.stage(meta_for(job, created_ms));
    EXPECT_TRUE(staged.has_value());
    EXPECT_TRUE(staged->write("report.json", to_json(small_report("/tmp/x.hprof")).dump()).has_value());
    EXPECT_TRUE(staged->write("dump.hprof", "JAVA PROFILE 1.0.2").has_value());
    auto committed = staged->commit();
    EXPECT_TRUE(committed.has_value()) << committed.error().message;
    return committed ? committed->id : "";
}

TEST(store, a_lost_file_keeps_what_is_left_and_a_damaged_entry_is_kept_aside_not_deleted) {
    scratch_dir dir;
    const store_options o = options_in(dir);
    std::string no_dump, no_report, garbled;
    {
        store_recovery rec;
        auto s = open_store(o, rec);
        no_dump = add_dump_entry(*s, 1, 1700000000000);
        no_report = add_dump_entry(*s, 2, 1700000001000);
        garbled = add_dump_entry(*s, 3, 1700000002000);
        ASSERT_TRUE(s->find(no_dump)->has_dump);
    }
    fs::remove(o.root + "/entries/" + no_dump + "/dump.hprof");
    fs::remove(o.root + "/entries/" + no_report + "/report.json");
    std::ofstream(o.root + "/entries/" + garbled + "/metadata.json") << "{\"id\": 12";
    store_recovery rec;
    auto s = open_store(o, rec);
    ASSERT_TRUE(s);
    EXPECT_TRUE(rec.removed_corrupt.empty());
    // A deleted dump leaves its valid report, and a deleted report its dump; each says what it lost.
    auto a = s->find(no_dump);
    ASSERT_TRUE(a);
    EXPECT_FALSE(a->has_dump);
    EXPECT_TRUE(a->has_report);
    EXPECT_EQ(a->damage, "dump.hprof was missing");
    EXPECT_TRUE(s->load_report(no_dump).has_value());
    auto b = s->find(no_report);
    ASSERT_TRUE(b);
    EXPECT_TRUE(b->has_dump);
    EXPECT_FALSE(b->has_report);
    EXPECT_EQ(b->damage, "report.json was missing");
    EXPECT_EQ(rec.repaired.size(), 2u);
    // Garbled metadata: the entry, its intact dump and report, kept aside where only an admin looks.
    EXPECT_FALSE(s->find(garbled));
    ASSERT_EQ(s->damaged().size(), 1u);
    EXPECT_EQ(s->damaged()[0].id, garbled);
    EXPECT_NE(s->damaged()[0].why.find("metadata"), std::string::npos) << s->damaged()[0].why;
    EXPECT_TRUE(fs::is_regular_file(s->damaged()[0].path + "/dump.hprof"));
    EXPECT_TRUE(fs::is_regular_file(s->damaged()[0].path + "/report.json"));
    // Said once: the next start finds the metadata telling what is left.
    s.reset();
    store_recovery again;
    auto s2 = open_store(o, again);
    EXPECT_TRUE(again.repaired.empty());
    EXPECT_TRUE(again.quarantined.empty());
    EXPECT_EQ(s2->find(no_dump)->damage, "dump.hprof was missing");
    EXPECT_EQ(s2->damaged().size(), 1u);
}

TEST(store, beyond_the_bound_the_oldest_damaged_entries_go) {
    scratch_dir dir;
    const store_options o = options_in(dir);
    std::vector<std::string> ids;
    {
        store_recovery rec;
        auto s = open_store(o, rec);
        for (std::uint64_t job = 1; job <= store::max_damaged + 2; ++job)
            ids.push_back(add_entry(*s, job, 1700000000000 + static_cast<std::int64_t>(job) * 1000));
    }
    for (const std::string& id : ids) std::ofstream(o.root + "/entries/" + id + "/metadata.json") << "garbage";
    store_recovery rec;
    auto s = open_store(o, rec);
    EXPECT_EQ(rec.quarantined.size(), ids.size());
    ASSERT_EQ(s->damaged().size(), store::max_damaged);
    EXPECT_EQ(s->damaged().front().id, ids[2]);  // the two oldest removed
    EXPECT_EQ(rec.removed_corrupt.size(), 2u);
    EXPECT_FALSE(fs::exists(o.root + "/damaged/" + ids[0]));
}

TEST(store, a_damaged_report_is_never_served) {
    scratch_dir dir;
    store_recovery rec;
    auto s = open_store(options_in(dir), rec);
    const std::string id = add_entry(*s, 1);
    std::ofstream(s->root() + "/entries/" + id + "/report.json") << R"({"summary": 5})";
    auto report = s->load_report(id);
    ASSERT_FALSE(report.has_value());
    EXPECT_NE(report.error().message.find("damaged"), std::string::npos);
    std::ofstream(s->root() + "/entries/" + id + "/report.json") << "{\"summ";
    EXPECT_FALSE(s->load_report(id).has_value());
}

TEST(store, remove_takes_the_whole_entry) {
    scratch_dir dir;
    store_recovery rec;
    auto s = open_store(options_in(dir), rec);
    const std::string id = add_entry(*s, 1);
    ASSERT_TRUE(s->remove(id).has_value());
    EXPECT_FALSE(s->find(id).has_value());
    EXPECT_TRUE(fs::is_empty(s->root() + "/entries"));
    EXPECT_EQ(s->remove(id).error().code, error_code::not_found);
    EXPECT_EQ(s->remove("../jobs").error().code, error_code::not_found);
}

TEST(store, entry_ids_are_never_paths) {
    EXPECT_TRUE(valid_entry_id("20231114T221320-7"));
    for (const char* bad : {"", "..", "../x", "a/b", ".tmp-x", "-x", "x y", "x\n"})
        EXPECT_FALSE(valid_entry_id(bad)) << bad;
    EXPECT_FALSE(valid_entry_id(std::string(65, 'a')));
}

TEST(store, retention_applies_after_new_entries) {
    scratch_dir dir;
    store_options o = options_in(dir);
    o.retention = {2, 0, 0};
    store_recovery rec;
    auto s = open_store(o, rec);
    add_entry(*s, 1, 1700000000000);
    add_entry(*s, 2, 1700000001000);
    const std::string newest = add_entry(*s, 3, 1700000002000);
    auto removed = s->apply_retention(1700000003000);
    ASSERT_EQ(removed.size(), 1u);
    EXPECT_EQ(removed[0], "20231114T221320-1");
    EXPECT_EQ(s->entries().size(), 2u);
    EXPECT_EQ(s->entries()[0].id, newest);
}

// The clock stepped back a day (a bad NTP sync) after entries were made, with the count reached:
// the entry just made is the newest by the store's sequence and stays; the oldest one made goes.
// Also after the store is opened again.
TEST(store, retention_keeps_the_entry_just_made_when_the_clock_stepped_back) {
    scratch_dir dir;
    store_options o = options_in(dir);
    o.retention = {2, 0, 30};
    const std::int64_t day = 24 * 3600 * 1000, t = 1700000000000;
    store_recovery rec;
    auto s = open_store(o, rec);
    const std::string first = add_entry(*s, 1, t);
    const std::string second = add_entry(*s, 2, t + 1000);
    const std::string made_back = add_entry(*s, 3, t + 2000 - day);
    auto removed = s->apply_retention(t + 3000 - day);
    EXPECT_EQ(removed, std::vector<std::string>{first});
    ASSERT_EQ(s->entries().size(), 2u);
    EXPECT_EQ(s->entries()[0].id, made_back);
    EXPECT_EQ(s->entries()[1].id, second);
    s.reset();
    auto again = open_store(o, rec);
    const std::string next = add_entry(*again, 4, t + 4000 - day);
    EXPECT_EQ(again->apply_retention(t + 5000 - day), std::vector<std::string>{second});
    ASSERT_EQ(again->entries().size(), 2u);
    EXPECT_EQ(again->entries()[0].id, next);
}

entry_metadata sized(const char* id, std::int64_t created_ms, std::uint64_t bytes) {
    entry_metadata m;
    m.id = id;
    m.created_ms = created_ms;
    m.stored_bytes = bytes;
    return m;
}

TEST(store_retention, by_count_bytes_and_age_keeping_the_newest) {
    const std::int64_t day = 24 * 3600 * 1000, now = 100 * day;
    std::vector<entry_metadata> e = {sized("a", now - 40 * day, 10), sized("b", now - 3 * day, 10),
                                     sized("c", now - 2 * day, 10), sized("d", now - 1 * day, 10)};
    using ids = std::vector<std::string>;
    EXPECT_EQ(expired_entries(e, {0, 0, 0}, now), ids{});
    EXPECT_EQ(expired_entries(e, {0, 0, 30}, now), ids{"a"});
    EXPECT_EQ(expired_entries(e, {2, 0, 0}, now), (ids{"b", "a"}));
    EXPECT_EQ(expired_entries(e, {0, 25, 0}, now), (ids{"b", "a"}));
    EXPECT_EQ(expired_entries(e, {0, 5, 0}, now), (ids{"c", "b", "a"}));  // the newest stays, however big
    EXPECT_EQ(expired_entries(e, {0, 0, 1}, now + 10 * day), (ids{"c", "b", "a"}));
}

entry_metadata owned(std::string id, std::int64_t created_ms, uid_t owner, const char* trigger = "request") {
    entry_metadata m = sized("", created_ms, 10);
    m.id = std::move(id);
    m.owner_uid = owner;
    m.trigger = trigger;
    return m;
}

TEST(store_retention, one_owners_entries_never_push_out_anothers) {
    const std::int64_t now = 1'000'000;
    std::vector<entry_metadata> e;
    // uid 1001 has two older dumps; uid 1002 then makes 52 newer ones.
    e.push_back(owned("victim-1", now - 1000, 1001));
    e.push_back(owned("victim-2", now - 999, 1001));
    for (int i = 0; i < 52; ++i) e.push_back(owned("flood-" + std::to_string(100 + i), now - 500 + i, 1002));
    retention_policy p;  // 50 in all, 20 per owner
    auto gone = expired_entries(e, p, now);
    EXPECT_EQ(gone.size(), 32u);  // the flood's 32 oldest
    for (const std::string& id : gone) EXPECT_TRUE(id.starts_with("flood-")) << id;
    // A store limit below what both hold together takes from whoever holds the most.
    p.max_count = 10;
    gone = expired_entries(e, p, now);
    EXPECT_EQ(gone.size(), 44u);
    EXPECT_EQ(std::count_if(gone.begin(), gone.end(), [](const std::string& id) { return id.starts_with("victim"); }),
              0);
}

TEST(store_retention, an_owners_oom_dumps_go_last) {
    const std::int64_t now = 1'000'000;
    std::vector<entry_metadata> e = {owned("oom-old", now - 100, 7, "oom"), owned("plain-1", now - 90, 7),
                                     owned("plain-2", now - 80, 7), owned("newest", now - 70, 7)};
    retention_policy p;
    p.max_count_per_owner = 2;
    using ids = std::vector<std::string>;
    EXPECT_EQ(expired_entries(e, p, now), (ids{"plain-2", "plain-1"}));
    p.max_count_per_owner = 1;
    EXPECT_EQ(expired_entries(e, p, now), (ids{"plain-2", "plain-1", "oom-old"}));
}

TEST(free_space, refuses_what_would_not_fit_with_a_clear_message) {
    scratch_dir dir;
    auto free_now = free_bytes(dir.path());
    ASSERT_TRUE(free_now.has_value());
    const disk_reserve none{0, 0};
    EXPECT_TRUE(ensure_free_space(dir.path(), 4096, none, "a small file").has_value());
    auto refused = ensure_free_space(dir.path(), *free_now + (std::uint64_t{1} << 30), none, "the dump of pid 42");
    ASSERT_FALSE(refused.has_value());
    EXPECT_EQ(refused.error().code, error_code::no_space);
    const std::string& m = refused.error().message;
    EXPECT_NE(m.find("not enough free space in " + dir.path() + " for the dump of pid 42"), std::string::npos) << m;
    EXPECT_NE(m.find("needed (estimated)"), std::string::npos) << m;
    // The reserve counts too: its floor, and its share of the disk (the whole of it here).
    EXPECT_FALSE(ensure_free_space(dir.path(), 4096, disk_reserve{0, *free_now}, "a small file").has_value());
    EXPECT_FALSE(ensure_free_space(dir.path(), 4096, disk_reserve{100, 0}, "a small file").has_value());
    EXPECT_EQ(bytes_beyond(dir.path(), disk_reserve{100, 0}).value_or(1), 0u);
    EXPECT_GT(bytes_beyond(dir.path(), none).value_or(0), 0u);
    EXPECT_FALSE(free_bytes(dir.file("missing/dir")).has_value());
}

}  // namespace
}  // namespace heapd::daemon
