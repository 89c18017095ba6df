// The records of deaths beside the store: each names the dumps kept of that JVM before it died,
// each user sees only their JVMs' records, the oldest go beyond the bound, and the journal entry
// of a death says what a fleet selects on.
#include "daemon/deaths/death_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <syslog.h>

#include <csignal>

#include "daemon/events/death_event.h"
#include "support/jvm_process.h"

namespace heapd::daemon {
namespace {

using test::scratch_dir;

std::unique_ptr<store> store_in(const scratch_dir& dir) {
    store_options o;
    o.root = dir.file("store");
    store_recovery rec;
    auto s = store::open(o, rec);
    EXPECT_TRUE(s) << s.error().message;
    return s ? std::move(*s) : nullptr;
}

// A dump entry (with a report) of the JVM pid that started at start_time.
std::string add_dump(store& s, pid_t pid, std::uint64_t start_time, std::uint64_t job,
                     const std::string& trigger = "request") {
    entry_metadata m;
    m.trigger = trigger;
    m.created_ms = 1'800'000'000'000 + static_cast<std::int64_t>(job) * 1000;
    m.source = "dump";
    m.pid = pid;
    m.jvm_start_time = start_time;
    m.job = job;
    auto staged = s.stage(m);
    EXPECT_TRUE(staged);
    EXPECT_TRUE(staged->write("report.json", "{}"));
    auto done = staged->commit();
    return done ? done->id : "";
}

death_record death_of(pid_t pid, std::uint64_t start_time, uid_t uid, std::int64_t died_ms) {
    death_record r;
    r.pid = pid;
    r.start_time = start_time;
    r.uid = uid;
    r.died_ms = died_ms;
    r.main_class = "com.example.Shop";
    r.status = exit_status_of(SIGKILL, "pidfd");
    r.verdict = {death_cause::oom_kill, "SIGKILL; the OOM kill count of its memory cgroup (cgroup v1 /shop) rose"};
    r.last_resident = 190ll << 20;
    r.limit.bytes = 200ll << 20;
    r.limit.by_cgroup = true;
    r.limit.source = "cgroup v1 /shop";
    return r;
}

TEST(death_store, a_record_names_the_dumps_of_that_jvm_and_only_its_owner_sees_it) {
    scratch_dir dir;
    auto s = store_in(dir);
    ASSERT_TRUE(s);
    const std::string first = add_dump(*s, 42, 1000, 1), second = add_dump(*s, 42, 1000, 2);
    add_dump(*s, 42, 999, 3);  // an earlier process with the pid: not this JVM's
    add_dump(*s, 43, 1000, 4);
    auto log = death_log::open(dir.file("store/deaths"), {});
    ASSERT_TRUE(log) << log.error().message;
    death_record r = death_of(42, 1000, 1001, 1'800'000'100'000);
    auto id = (*log)->keep(*s, r);
    ASSERT_TRUE(id) << id.error().message;
    EXPECT_EQ(*id, "20270115T080140-death-42");
    EXPECT_EQ(r.kept, (std::vector<std::string>{second, first}));  // newest first
    struct stat st {};
    ASSERT_EQ(::stat(dir.file("store/deaths/" + *id + ".json").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0640u);

    const auto owners = (*log)->list([](uid_t u) { return u == 1001; });
    ASSERT_EQ(owners.size(), 1u);
    EXPECT_EQ(owners[0]["id"], *id);
    EXPECT_EQ(owners[0]["death"]["cause"], "oom_kill");
    EXPECT_EQ(owners[0]["death"]["kept"][0], second);
    EXPECT_TRUE((*log)->list([](uid_t u) { return u == 1002; }).empty());
    // Deaths are no entries of the store: they never count against the retention of dumps.
    EXPECT_EQ(s->entries().size(), 4u);
}

TEST(death_store, a_record_names_the_dump_of_its_out_of_memory_error_kept_before_or_after_it) {
    scratch_dir dir;
    auto s = store_in(dir);
    ASSERT_TRUE(s);
    auto log = death_log::open(dir.file("store/deaths"), {});
    ASSERT_TRUE(log) << log.error().message;
    // Kept before it died: the record names it at once.
    const std::string before = add_dump(*s, 42, 1000, 1, "oom");
    death_record r = death_of(42, 1000, 1001, 1'800'000'100'000);
    ASSERT_TRUE((*log)->keep(*s, r));
    EXPECT_EQ(r.oom_dump, before);
    // Kept after: the record of that very process is rewritten to name it, once.
    death_record later = death_of(43, 2000, 1001, 1'800'000'200'000);
    auto id = (*log)->keep(*s, later);
    ASSERT_TRUE(id);
    EXPECT_EQ(later.oom_dump, "");
    auto list = [&](pid_t pid) {
        for (const wire::json& item : (*log)->list([](uid_t) { return true; }))
            if (item["death"]["pid"] == pid) return item["death"];
        return wire::json();
    };
    EXPECT_FALSE(list(43).contains("oom_dump"));
    add_dump(*s, 43, 1999, 2, "oom");  // an earlier process with the pid
    add_dump(*s, 43, 2000, 3);         // no OOM's
    for (const entry_metadata& m : s->entries()) {
        auto noted = (*log)->note_oom_dump(m);
        ASSERT_TRUE(noted) << noted.error().message;
        EXPECT_EQ(*noted, "") << m.id;
    }
    const std::string after = add_dump(*s, 43, 2000, 4, "oom");
    auto m = s->find(after);
    ASSERT_TRUE(m);
    auto noted = (*log)->note_oom_dump(*m);
    ASSERT_TRUE(noted) << noted.error().message;
    EXPECT_EQ(*noted, *id);
    EXPECT_EQ(list(43)["oom_dump"], after);
    const std::string second = add_dump(*s, 43, 2000, 5, "oom");
    EXPECT_EQ(*(*log)->note_oom_dump(*s->find(second)), "");
    EXPECT_EQ(list(43)["oom_dump"], after);
    EXPECT_EQ(list(42)["oom_dump"], before);
}

TEST(death_store, beyond_the_bound_the_oldest_records_go) {
    scratch_dir dir;
    auto s = store_in(dir);
    ASSERT_TRUE(s);
    auto log = death_log::open(dir.file("store/deaths"), {}, 3);
    ASSERT_TRUE(log);
    for (pid_t pid = 1; pid <= 5; ++pid) {
        death_record r = death_of(pid, 7, 0, 1'800'000'000'000 + pid * 1000);
        ASSERT_TRUE((*log)->keep(*s, r));
    }
    const auto all = (*log)->list([](uid_t) { return true; });
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[0]["death"]["pid"], 5);
    EXPECT_EQ(all[2]["death"]["pid"], 3);
}

TEST(death_store, one_owners_many_deaths_push_out_only_their_own) {
    scratch_dir dir;
    auto s = store_in(dir);
    ASSERT_TRUE(s);
    {
        auto log = death_log::open(dir.file("store/deaths"), {}, 10);
        ASSERT_TRUE(log);
        // A victim's OOM kill and root's, then 50 deaths of a third user's processes.
        death_record victim = death_of(100, 7, 1001, 1'800'000'000'000);
        death_record root = death_of(101, 7, 0, 1'800'000'001'000);
        ASSERT_TRUE((*log)->keep(*s, victim));
        ASSERT_TRUE((*log)->keep(*s, root));
        for (pid_t pid = 200; pid < 250; ++pid) {
            death_record r = death_of(pid, 7, 1002, 1'800'000'010'000 + pid * 1000);
            ASSERT_TRUE((*log)->keep(*s, r));
        }
        const auto all = (*log)->list([](uid_t) { return true; });
        ASSERT_EQ(all.size(), 10u);
        EXPECT_EQ(all[0]["death"]["pid"], 249);
        EXPECT_EQ(all[8]["death"]["pid"], 101);
        EXPECT_EQ(all[9]["death"]["pid"], 100);
    }
    // Reopened with a smaller bound, the records on disk are counted by owner as they were.
    auto log = death_log::open(dir.file("store/deaths"), {}, 4);
    ASSERT_TRUE(log);
    const auto all = (*log)->list([](uid_t) { return true; });
    ASSERT_EQ(all.size(), 4u);
    EXPECT_EQ(all[0]["death"]["pid"], 249);
    EXPECT_EQ(all[1]["death"]["pid"], 248);
    EXPECT_EQ(all[2]["death"]["pid"], 101);
    EXPECT_EQ(all[3]["death"]["pid"], 100);
}

TEST(death_store, the_journal_entry_warns_of_an_oom_kill_with_what_a_fleet_selects_on) {
    death_record r = death_of(42, 1000, 1001, 0);
    r.main_class = "evil\nMESSAGE=forged";
    const auto fields = journal_fields(r, "20270115T080820-death-42");
    std::map<std::string, std::string> f;
    for (const std::string& field : fields) {
        ASSERT_EQ(field.find('\n'), std::string::npos) << field;  // nothing from the JVM forges a field
        const auto eq = field.find('=');
        f[field.substr(0, eq)] = field.substr(eq + 1);
    }
    EXPECT_EQ(f["MESSAGE_ID"], jvm_died_message_id);
    EXPECT_EQ(f["PRIORITY"], std::to_string(LOG_WARNING));
    EXPECT_EQ(f["HEAPD_CAUSE"], "oom_kill");
    EXPECT_EQ(f["HEAPD_SIGNAL"], "SIGKILL");
    EXPECT_EQ(f["HEAPD_PID"], "42");
    EXPECT_EQ(f["HEAPD_RESIDENT_BYTES"], std::to_string(190ll << 20));
    EXPECT_EQ(f["HEAPD_LIMIT_BYTES"], std::to_string(200ll << 20));
    EXPECT_EQ(f["HEAPD_CGROUP"], "cgroup v1 /shop");
    EXPECT_EQ(f["HEAPD_DEATH_ID"], "20270115T080820-death-42");
    EXPECT_EQ(f["MESSAGE"].rfind("JVM 42 (evil", 0), 0u) << f["MESSAGE"];
    EXPECT_EQ(f.count("HEAPD_CONTAINER"), 0u);  // on the host
    r.container = {{"name", "app"}, {"pod", "orders-0"}, {"namespace", "shop"}, {"label", "shop/orders-0/app"}};
    auto in_pod = journal_fields(r, "");
    EXPECT_NE(std::find(in_pod.begin(), in_pod.end(), "HEAPD_CONTAINER=shop/orders-0/app"), in_pod.end());
    EXPECT_NE(std::find(in_pod.begin(), in_pod.end(), "HEAPD_POD=orders-0"), in_pod.end());
    EXPECT_NE(std::find(in_pod.begin(), in_pod.end(), "HEAPD_NAMESPACE=shop"), in_pod.end());
    r.verdict.cause = death_cause::failed;
    r.status = exit_status_of(3 << 8, "zombie");
    const auto failed = journal_fields(r, "");
    EXPECT_NE(std::find(failed.begin(), failed.end(), "PRIORITY=" + std::to_string(LOG_NOTICE)), failed.end());
    EXPECT_NE(std::find(failed.begin(), failed.end(), "HEAPD_EXIT_CODE=3"), failed.end());
}

}  // namespace
}  // namespace heapd::daemon
