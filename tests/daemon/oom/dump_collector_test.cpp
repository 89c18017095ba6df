// The daemon's collection of a hook-less JVM's OOM dump (daemon/oom/dump_collector.h), against a
// real directory and inotify, this test's own process standing in for the JVM: a dump is held from
// the moment it is made, so that it is whole though its name is gone once it is closed (a container
// removed); only a regular file of the JVM's user with one name is taken, never what a link names,
// never a FIFO (which would block) and never a file that was there before the watch. The real JVMs,
// on the host and in containers, are tests/e2e/zero_touch_test.cpp.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "attach/process_info.h"
#include "base/fd_io.h"
#include "daemon/oom/dump_collector.h"
#include "support/jvm_process.h"

namespace heapd::test {
namespace {

using daemon::collect_target;
using daemon::collected_dump;
using daemon::dump_collector;
using daemon::is_dump_name;

TEST(dump_collector, names_of_hotspots_dumps_to_one_path) {
    EXPECT_TRUE(is_dump_name("java_pid1.hprof", "java_pid1.hprof"));
    EXPECT_TRUE(is_dump_name("java_pid1.hprof.3", "java_pid1.hprof"));
    EXPECT_FALSE(is_dump_name("java_pid1.hprof.p0", "java_pid1.hprof"));  // JDK 21's segment files
    EXPECT_FALSE(is_dump_name("java_pid11.hprof", "java_pid1.hprof"));
    EXPECT_FALSE(is_dump_name("java_pid1.hprof.", "java_pid1.hprof"));
    EXPECT_FALSE(is_dump_name("java_pid1.hprof.123456789012", "java_pid1.hprof"));
}

// A collector on its own io_context, watching dir for this process as if it were a JVM.
struct collector_fixture {
    explicit collector_fixture(const std::string& dump_path) {
        auto c = dump_collector::open(io, [this](collected_dump d) { got.push_back(std::move(d)); });
        EXPECT_TRUE(c.has_value());
        if (c) collector = std::move(*c);
        auto info = attach::read_process_info(::getpid());
        target.id = {::getpid(), info ? info->start_time : 0};
        target.ns_pid = 1;
        target.uid = ::geteuid();
        target.gid = ::getegid();
        target.dump_path = dump_path;
    }
    // Runs the io_context until a dump came or 5 s passed.
    void run_until_dump() {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (got.empty() && std::chrono::steady_clock::now() < deadline) {
            io.restart();
            io.run_for(std::chrono::milliseconds(50));
        }
    }
    boost::asio::io_context io;
    std::unique_ptr<dump_collector> collector;
    collect_target target;
    std::vector<collected_dump> got;
};

std::string contents(int fd) {
    ::lseek(fd, 0, SEEK_SET);
    auto text = read_to_end(fd, 1 << 20);
    return text ? *text : std::string("(unreadable)");
}

TEST(dump_collector, a_dump_is_held_from_its_making_and_handed_on_once_closed_though_its_name_is_gone) {
    scratch_dir dir;
    collector_fixture f(dir.path());  // a directory: the dump is java_pid1.hprof in it
    ASSERT_TRUE(f.collector->watch(f.target).has_value());
    EXPECT_EQ(f.collector->size(), 1u);
    {
        // Made, written and closed, its name removed at once, as a container's /tmp goes.
        const int fd = ::open(dir.file("java_pid1.hprof").c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        ASSERT_GE(fd, 0);
        f.io.restart();
        f.io.poll();  // the creation seen, the file opened
        ASSERT_EQ(::write(fd, "JAVA PROFILE 1.0.2", 18), 18);
        ::unlink(dir.file("java_pid1.hprof").c_str());
        ::close(fd);
    }
    f.run_until_dump();
    ASSERT_EQ(f.got.size(), 1u);
    EXPECT_EQ(f.got[0].path, dir.file("java_pid1.hprof"));
    EXPECT_EQ(contents(f.got[0].file.get()), "JAVA PROFILE 1.0.2");
    EXPECT_EQ(f.got[0].target.id, f.target.id);
}

TEST(dump_collector, a_dump_path_naming_a_file_is_watched_in_its_directory) {
    scratch_dir dir;
    collector_fixture f(dir.file("app.hprof"));
    ASSERT_TRUE(f.collector->watch(f.target).has_value());
    std::ofstream(dir.file("other.hprof")) << "not this one";
    std::ofstream(dir.file("app.hprof")) << "the dump";
    f.run_until_dump();
    ASSERT_EQ(f.got.size(), 1u);
    EXPECT_EQ(f.got[0].path, dir.file("app.hprof"));
    EXPECT_EQ(contents(f.got[0].file.get()), "the dump");
}

TEST(dump_collector, links_fifos_other_users_files_and_files_there_before_are_not_taken) {
    scratch_dir dir;
    std::ofstream(dir.file("java_pid1.hprof")) << "an earlier run's dump";
    collector_fixture f(dir.path());
    ASSERT_TRUE(f.collector->watch(f.target).has_value());
    // There before the watch: written again and closed, still not this JVM's dump.
    std::ofstream(dir.file("java_pid1.hprof"), std::ios::app) << "!";
    // A link to a file of root's, a FIFO (opening it for reading would block), another user's file.
    std::ofstream(dir.file("secret")) << "root's";
    ASSERT_EQ(::symlink(dir.file("secret").c_str(), dir.file("java_pid1.hprof.1").c_str()), 0);
    ASSERT_EQ(::mkfifo(dir.file("java_pid1.hprof.2").c_str(), 0600), 0);
    {
        const int fd = ::open(dir.file("java_pid1.hprof.3").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(::fchown(fd, 12345, 12345), 0);
        ::close(fd);
    }
    f.io.restart();
    f.io.run_for(std::chrono::milliseconds(300));
    EXPECT_TRUE(f.got.empty());
    // The real one after them is taken.
    std::ofstream(dir.file("java_pid1.hprof.4")) << "the dump";
    f.run_until_dump();
    ASSERT_EQ(f.got.size(), 1u);
    EXPECT_EQ(f.got[0].path, dir.file("java_pid1.hprof.4"));
}

TEST(dump_collector, a_jvm_gone_before_closing_its_dump_has_what_it_wrote_handed_on) {
    scratch_dir dir;
    collector_fixture f(dir.path());
    ASSERT_TRUE(f.collector->watch(f.target).has_value());
    const int fd = ::open(dir.file("java_pid1.hprof").c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "half", 4), 4);
    f.io.restart();
    f.io.poll();
    EXPECT_TRUE(f.got.empty());  // not closed: not whole yet
    f.collector->forget(f.target.id);
    f.run_until_dump();
    ::close(fd);
    ASSERT_EQ(f.got.size(), 1u);
    EXPECT_EQ(contents(f.got[0].file.get()), "half");
    EXPECT_EQ(f.collector->size(), 0u);
}

TEST(dump_collector, a_dump_directory_reached_through_a_link_is_refused) {
    scratch_dir dir;
    std::filesystem::create_directory(dir.file("real"));
    std::filesystem::create_directory_symlink(dir.file("real"), dir.file("link"));
    collector_fixture f(dir.file("link") + "/app.hprof");
    auto watched = f.collector->watch(f.target);
    EXPECT_FALSE(watched.has_value());
    EXPECT_EQ(f.collector->size(), 0u);
}

}  // namespace
}  // namespace heapd::test
