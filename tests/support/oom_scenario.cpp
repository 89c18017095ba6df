#include "support/oom_scenario.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "support/jvm_process.h"

namespace heapd::test {
namespace {

using wire::json;
namespace fs = std::filesystem;

long long read_number(const std::string& path) {
    std::ifstream in(path);
    long long v = -1;
    in >> v;
    return v;
}

}  // namespace

std::string hook_flag(const serve_process& d, const std::string& dir, const std::string& spool, const std::string& hook,
                      const std::string& options) {
    return "-XX:OnOutOfMemoryError=date +%s%N > " + dir + "/t0;" + (hook.empty() ? heapd_binary() : hook) +
           " dump %p --socket " + d.socket() + " --spool " + spool + (options.empty() ? "" : " " + options) + " > " +
           dir + "/hook.out 2>&1;date +%s%N > " + dir + "/t1";
}

std::string unarmed_hook(const std::string& dir) {
    const std::string link = dir + "/oomhook";
    std::error_code ec;
    fs::create_symlink(heapd_binary(), link, ec);
    return link;
}

double hook_ms(const std::string& dir) {
    for (int i = 0; i < 1200 && !fs::exists(dir + "/t1"); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // t1 complete
    long long t0 = read_number(dir + "/t0"), t1 = read_number(dir + "/t1");
    return t0 > 0 && t1 >= t0 ? static_cast<double>(t1 - t0) / 1e6 : -1;
}

json armed_row(const serve_process& d, pid_t pid, const temp_user* as) {
    for (int i = 0; i < 600; ++i) {
        auto r = run_heapctl(d, {"jvms", "--json"}, as);
        if (r.exit_code == 0)
            for (const json& j : json::parse(r.out))
                if (j.value("pid", 0) == pid && j.contains("oom_arming")) return j;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return json::object();
}

json finished_dump_job(const serve_process& d, pid_t pid) {
    for (int i = 0; i < 1800; ++i) {
        auto jobs = run_heapctl(d, {"jobs", "--json"});
        if (jobs.exit_code == 0)
            for (const json& j : json::parse(jobs.out))
                if (j["kind"] == "dump" && (pid == 0 || j.value("jvm_pid", 0) == pid) &&
                    (j["state"] == "done" || j["state"] == "failed" || j["state"] == "cancelled"))
                    return j;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return json::object();
}

bool ended(pid_t pid) {
    for (int i = 0; i < 600; ++i) {
        std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
        std::string text(std::istreambuf_iterator<char>(stat), {});
        const auto close = text.rfind(')');
        if (!stat || close == std::string::npos || text.substr(close + 2, 1) == "Z") return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
}

std::string expect_leak_report(const serve_process& d, pid_t pid, const std::string& main_class, const temp_user* as) {
    auto r = run_heapctl(d, {"report", std::to_string(pid), "--json"}, as);
    EXPECT_EQ(r.exit_code, 0) << r.err << d.log();
    if (r.exit_code != 0) return {};
    json report = json::parse(r.out);
    const json& top = report["leak_suspects"]["suspects"].at(0);
    const std::string path = top["path"]["text"].get<std::string>();
    EXPECT_NE(path.find(main_class + " (static CACHE)"), std::string::npos) << path;
    EXPECT_NE(path.find("java.util.HashMap"), std::string::npos) << path;
    auto text = run_heapctl(d, {"report", std::to_string(pid)}, as);
    EXPECT_NE(text.out.find(main_class + " (static CACHE)"), std::string::npos) << text.out;
    json dumps = json::parse(run_heapctl(d, {"dumps", "--json"}, as).out);
    EXPECT_EQ(dumps.size(), 1u);
    if (dumps.empty()) return text.out;
    EXPECT_EQ(dumps[0]["trigger"], "oom");
    EXPECT_EQ(dumps[0]["pid"], pid);
    EXPECT_EQ(dumps[0]["has_dump"], true);
    return text.out;
}

std::string file_text(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace heapd::test
