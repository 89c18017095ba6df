// The daemon attacked by a local user's fake JVMs: processes of theirs that map an hsperfdata file
// they wrote by hand (discovery takes any process that maps /tmp/hsperfdata_USER/PID for a JVM, as
// jps does). What the file says, however big, must not grow the daemon's memory, break a listing
// for other users, or flood the death records, the log and the journal.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "support/hostile_user.h"
#include "support/hsperf_builder.h"
#include "support/isolated_jvm.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

using namespace std::chrono_literals;
using wire::json;

// A user's fake JVMs (root's when user is null): `count` processes of theirs, each mapping a hard
// link, named after its pid in /tmp/hsperfdata_USER, to one hsperfdata file the test built. Each
// ends with exit status 1 on SIGUSR1.
class fake_jvms {
public:
    fake_jvms(const temp_user* user, const hsperf_builder& file, int count)
        : dir_("/tmp/hsperfdata_" + (user != nullptr ? user->name() : std::string("root"))),
          file_(dir_ + "/fake-template-" + std::to_string(::getpid())),
          own_dir_(user != nullptr) {
        std::filesystem::create_directories(dir_);
        file.write(file_);
        if (user != nullptr) {
            ::chown(dir_.c_str(), user->uid(), user->gid());
            ::chmod(dir_.c_str(), 0755);
            ::chown(file_.c_str(), user->uid(), user->gid());
        }
        for (int i = 0; i < count; ++i) {
            const pid_t pid = ::fork();
            if (pid == 0) run(user);
            if (pid > 0) pids_.push_back(pid);
        }
        started_ = pids_;
    }
    fake_jvms(const temp_user& user, const hsperf_builder& file, int count) : fake_jvms(&user, file, count) {}
    ~fake_jvms() {
        for (pid_t pid : pids_) ::kill(pid, SIGKILL);
        for (pid_t pid : pids_) ::waitpid(pid, nullptr, 0);
        std::error_code ec;
        if (own_dir_) {
            std::filesystem::remove_all(dir_, ec);
            return;
        }
        // Root's folder is every root JVM's: only what this made goes.
        std::filesystem::remove(file_, ec);
        for (pid_t pid : started_) std::filesystem::remove(dir_ + "/" + std::to_string(pid), ec);
    }
    fake_jvms(const fake_jvms&) = delete;
    fake_jvms& operator=(const fake_jvms&) = delete;

    const std::vector<pid_t>& pids() const { return pids_; }
    // Makes them all exit with status 1 and reaps them.
    void exit_all() {
        for (pid_t pid : pids_) ::kill(pid, SIGUSR1);
        for (pid_t pid : pids_) ::waitpid(pid, nullptr, 0);
        pids_.clear();
    }

private:
    [[noreturn]] void run(const temp_user* user) {
        ::signal(SIGUSR1, [](int) { ::_exit(1); });
        if (user != nullptr && !become(*user)) ::_exit(2);
        const std::string name = dir_ + "/" + std::to_string(::getpid());
        if (::link(file_.c_str(), name.c_str()) != 0) ::_exit(3);
        const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
        struct stat st {};
        if (fd < 0 || ::fstat(fd, &st) != 0 ||
            ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED)
            ::_exit(4);
        for (;;) ::pause();
    }

    std::string dir_, file_;
    bool own_dir_;
    std::vector<pid_t> pids_, started_;
};

// An hsperfdata file whose command, version and arguments are `bytes` long each, made of `fill`.
hsperf_builder file_with_strings(std::size_t bytes, char fill) {
    hsperf_builder b(true, 0);
    b.add_string("sun.rt.javaCommand", "Fake" + std::string(bytes, fill));
    b.add_string("java.property.java.vm.version", std::string(bytes, fill));
    b.add_string("java.rt.vmArgs", "-XX:HeapDumpPath=" + std::string(bytes, fill));
    b.add_long("sun.os.hrt.frequency", 1'000'000'000, hsperf_builder::units_hertz, hsperf_builder::constant);
    return b;
}

// The daemon's peak resident memory (VmHWM), in bytes.
long long peak_resident(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(in, line);)
        if (line.starts_with("VmHWM:")) return std::stoll(line.substr(6)) * 1024;
    return -1;
}

// The rows of one user's JVMs in root's `heapctl jvms --json` once there are n of them (30 s at
// most; 0: at once): the last listing's rows, null when it failed.
json jvms_of(const serve_process& d, uid_t uid, std::size_t n) {
    json mine;
    for (int i = 0; i < 100; ++i) {
        auto r = run_heapctl(d, {"jvms", "--json"});
        json rows = json::parse(r.out, nullptr, false);
        if (r.exit_code != 0 || !rows.is_array()) return nullptr;
        mine = json::array();
        for (const json& row : rows)
            if (row.value("uid", -1) == static_cast<long long>(uid)) mine.push_back(row);
        if (n == 0 || mine.size() == n) break;
        std::this_thread::sleep_for(300ms);
    }
    return mine;
}

// Eight fake JVMs whose command line is 40 MiB (hsperfdata used to be read up to 64 MiB, and its
// strings kept whole in the watch of each JVM, its death record, `jvms` and the metrics): the
// daemon's peak memory stays within a few MiB of where it was, root's `jvms` still answers (each
// fake listed with why its file was not read), and each fake's death record is small.
TEST(serve_attack, fake_jvms_with_40_mib_strings_leave_the_daemons_memory_where_it_was) {
    temp_user attacker;
    ASSERT_TRUE(attacker.ok());
    serve_process d({}, {"setsid"});
    ASSERT_TRUE(d.ready()) << d.log();
    std::this_thread::sleep_for(5s);  // its first polls of the host's JVMs
    ASSERT_EQ(run_heapctl(d, {"jvms"}).exit_code, 0);
    ASSERT_EQ(run_heapctl(d, {"metrics"}).exit_code, 0);
    const long long idle = peak_resident(d.pid());
    ASSERT_GT(idle, 0);

    fake_jvms fakes(attacker, file_with_strings(std::size_t{40} << 20, 'A'), 8);
    ASSERT_EQ(fakes.pids().size(), 8u);
    const json mine = jvms_of(d, attacker.uid(), 8);
    ASSERT_TRUE(mine.is_array()) << "root's jvms failed" << d.log();
    ASSERT_EQ(mine.size(), 8u) << mine.dump().substr(0, 2000);
    for (const json& row : mine)
        EXPECT_NE(row.value("problem", "").find("larger than 1 MiB"), std::string::npos) << row.dump().substr(0, 500);
    std::this_thread::sleep_for(6s);  // the watch, the rules and the arming have each polled them
    EXPECT_EQ(run_heapctl(d, {"metrics"}).exit_code, 0);
    fakes.exit_all();
    // The attacker's records (root sees every JVM's on the host, other tests' among them).
    json deaths;
    for (int i = 0; i < 100; ++i) {
        const json all = json::parse(run_heapctl(d, {"deaths", "--json"}).out, nullptr, false);
        deaths = json::array();
        if (all.is_array())
            for (const json& item : all)
                if (item["death"]["uid"] == attacker.uid()) deaths.push_back(item);
        if (deaths.size() == 8) break;
        std::this_thread::sleep_for(300ms);
    }
    EXPECT_EQ(deaths.size(), 8u);
    for (const json& item : deaths) EXPECT_LT(item.dump().size(), 16u << 10);
    // A few MiB alone (1.1 here); the JVMs of tests running beside it are watched and listed too.
    const long long peak = peak_resident(d.pid());
    EXPECT_LT(peak - idle, 16ll << 20) << "idle " << idle << " B, under attack " << peak << " B";
    std::printf("daemon peak resident: idle %.1f MiB, under attack %.1f MiB\n", idle / 1048576.0, peak / 1048576.0);
}

// 120 fake JVMs of one user, each file 1 MiB of strings that JSON writes six bytes for each of
// (\u0001): root's `jvms` used to fail for everyone ("the reply is too large for one message"). Now
// the texts are cut at 4 KiB and the reply takes each user's JVMs in turn: the victim's real JVM is
// listed, and the fakes that did not fit are counted.
TEST(serve_attack, a_users_many_fake_jvms_cannot_break_or_crowd_out_roots_jvms_listing) {
    temp_user attacker, victim;
    ASSERT_TRUE(attacker.ok() && victim.ok());
    isolated_jvm jvm = attach_target_of(victim);
    ASSERT_TRUE(jvm.ready());
    serve_process d({}, {"setsid"});
    ASSERT_TRUE(d.ready()) << d.log();
    fake_jvms fakes(attacker, file_with_strings(300'000, '\x01'), 120);
    ASSERT_EQ(fakes.pids().size(), 120u);
    std::this_thread::sleep_for(3s);
    auto r = run_heapctl(d, {"jvms", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json rows = json::parse(r.out);
    EXPECT_LE(r.out.size(), 9u << 20);
    bool victims = false;
    std::size_t attackers = 0;
    for (const json& row : rows) {
        if (row["pid"] == jvm.pid()) victims = true;
        if (row["uid"] == attacker.uid()) {
            ++attackers;
            EXPECT_LE(row.value("command", "").size(), 4096u);
        }
    }
    EXPECT_TRUE(victims) << "the victim's JVM is not listed";
    EXPECT_GT(attackers, 0u);
    EXPECT_LT(attackers, 120u);
    auto text = run_heapctl(d, {"jvms"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find(std::to_string(120 - attackers) + " more JVMs of " + attacker.name() + " not listed"),
              std::string::npos)
        << text.out.substr(text.out.size() - std::min<std::size_t>(text.out.size(), 2000));
    // The victim lists its own JVM as before.
    auto own = run_heapctl(d, {"jvms", "--json"}, &victim);
    ASSERT_EQ(own.exit_code, 0) << own.err;
    EXPECT_EQ(json::parse(own.out).size(), 1u);
}

// One user's 100 fake JVMs exiting with status 1 at once: their deaths are counted, but recorded,
// logged and journalled 30 at once and then one every 2 s; the victim's death record, kept before,
// stays; the deaths held back are said in one line. Root's deaths are not held back.
TEST(serve_attack, a_flood_of_one_users_jvm_deaths_is_recorded_at_a_rate_and_keeps_anothers) {
    temp_user attacker, victim;
    ASSERT_TRUE(attacker.ok() && victim.ok());
    serve_process d({}, {"setsid"});
    ASSERT_TRUE(d.ready()) << d.log();
    pid_t victim_pid = -1;
    {
        isolated_jvm jvm = attach_target_of(victim);
        ASSERT_TRUE(jvm.ready());
        victim_pid = jvm.pid();
        std::this_thread::sleep_for(5s);  // watched
        ::kill(jvm.pid(), SIGKILL);
    }
    fake_jvms fakes(attacker, file_with_strings(16, 'x'), 100);
    ASSERT_EQ(fakes.pids().size(), 100u);
    const json mine = jvms_of(d, attacker.uid(), 100);
    ASSERT_EQ(mine.size(), 100u);
    std::this_thread::sleep_for(5s);  // each watched
    const auto flood = std::chrono::steady_clock::now();
    fakes.exit_all();
    std::this_thread::sleep_for(5s);
    const json deaths = json::parse(run_heapctl(d, {"deaths", "--json"}).out);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - flood).count();
    std::size_t attackers = 0;
    bool victims = false;
    for (const json& item : deaths) {
        if (item["death"]["uid"] == attacker.uid()) ++attackers;
        if (item["death"]["pid"] == victim_pid) victims = true;
    }
    EXPECT_TRUE(victims) << deaths.dump().substr(0, 2000);
    EXPECT_GE(attackers, 30u);
    EXPECT_LE(attackers, 30u + static_cast<std::size_t>(seconds / 2) + 1) << seconds << " s";
    // The victim still sees its own record.
    const json own = json::parse(run_heapctl(d, {"deaths", "--json"}, &victim).out);
    ASSERT_EQ(own.size(), 1u);
    EXPECT_EQ(own[0]["death"]["pid"], victim_pid);
    // The next death after the interval says how many were held back.
    std::this_thread::sleep_for(6s);
    fake_jvms one_more(attacker, file_with_strings(16, 'x'), 1);
    std::this_thread::sleep_for(5s);
    one_more.exit_all();
    const std::string said = "were counted but not recorded, logged or journalled";
    std::string log;
    for (int i = 0; i < 50 && (log = d.log()).find(said) == std::string::npos; ++i) std::this_thread::sleep_for(200ms);
    EXPECT_NE(log.find(said), std::string::npos) << log.substr(log.size() - std::min<std::size_t>(log.size(), 3000));
    // Root's JVMs no other user can end, and a rollout of root's containers ends dozens at once:
    // root's 40 deaths at once are all recorded.
    fake_jvms roots(nullptr, file_with_strings(16, 'r'), 40);
    ASSERT_EQ(roots.pids().size(), 40u);
    const std::vector<pid_t> root_pids = roots.pids();
    // Root's JVMs of tests running beside this one are listed too: these 40 are looked for by pid.
    std::size_t listed = 0;
    for (int i = 0; i < 100 && listed < root_pids.size(); ++i) {
        std::this_thread::sleep_for(300ms);
        listed = 0;
        for (const json& row : jvms_of(d, 0, 0))
            listed += std::find(root_pids.begin(), root_pids.end(), row["pid"].get<pid_t>()) != root_pids.end();
    }
    ASSERT_EQ(listed, root_pids.size());
    std::this_thread::sleep_for(5s);  // each watched
    roots.exit_all();
    std::size_t recorded = 0;
    for (int i = 0; i < 50 && recorded < root_pids.size(); ++i) {
        std::this_thread::sleep_for(200ms);
        recorded = 0;
        for (const json& item : json::parse(run_heapctl(d, {"deaths", "--json"}).out))
            recorded +=
                std::find(root_pids.begin(), root_pids.end(), item["death"]["pid"].get<pid_t>()) != root_pids.end();
    }
    EXPECT_EQ(recorded, root_pids.size());
}

}  // namespace
}  // namespace heapd::test
