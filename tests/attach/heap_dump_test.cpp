// Heap dumps through attach landing at a host path: in place for a JVM of our user, and brought out
// of the JVM's own /tmp (then removed there) for a JVM in a container or of another user.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "attach/attach_client.h"
#include "attach/attach_test_util.h"
#include "attach/heap_dump.h"
#include "support/isolated_jvm.h"
#include "support/jvm_process.h"

namespace heapd::test {
namespace {

// The first bytes of a file.
std::string head(const std::string& path, std::size_t n) {
    std::ifstream in(path, std::ios::binary);
    std::string s(n, '\0');
    in.read(s.data(), static_cast<std::streamsize>(n));
    s.resize(static_cast<std::size_t>(in.gcount()));
    return s;
}

ino_t mount_namespace(const std::string& proc) {
    struct stat st {};
    return ::stat((proc + "/ns/mnt").c_str(), &st) == 0 ? st.st_ino : 0;
}

TEST(heap_dump, in_place_for_a_jvm_of_our_user) {
    demo_jvm jvm({"-Xmx64m"});
    ASSERT_TRUE(jvm.ready());
    scratch_dir dir;
    auto r = attach::dump_heap(jvm.pid(), dir.file("demo.hprof"));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->reply.status, 0);
    EXPECT_TRUE(r->written) << r->reply.output;
    EXPECT_TRUE(r->staged_path.empty());
    EXPECT_EQ(r->path, dir.file("demo.hprof"));
    EXPECT_EQ(head(r->path, 18), "JAVA PROFILE 1.0.2");
    EXPECT_NE(r->reply.output.find("Heap dump file created"), std::string::npos) << r->reply.output;
    auto again = attach::dump_heap(jvm.pid(), dir.file("demo.hprof"));  // never overwritten
    ASSERT_FALSE(again);
    auto gz = attach::dump_heap(jvm.pid(), dir.file("demo.hprof.gz"), {.live = false, .gzip_level = 1});
    ASSERT_TRUE(gz) << gz.error().message;
    EXPECT_TRUE(gz->written);
    EXPECT_EQ(head(gz->path, 2), "\x1f\x8b");
    // The JVM cannot write there: its complaint comes back, with no file.
    auto nowhere = attach::dump_heap(jvm.pid(), dir.file("missing-dir/x.hprof"));
    ASSERT_TRUE(nowhere) << nowhere.error().message;
    EXPECT_FALSE(nowhere->written);
    EXPECT_NE(nowhere->reply.output.find("No such file or directory"), std::string::npos) << nowhere->reply.output;
    EXPECT_EQ(trigger_files(jvm.pid()), std::vector<std::string>{});
}

TEST(heap_dump, out_of_a_container_and_removed_there) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root for namespaces";
    scratch_dir work;
    const ino_t our_namespace = mount_namespace("/proc/self");
    isolated_jvm jvm(java_main{"Demo"}, {"-Xmx64m"}, {"200"}, isolation{nullptr, true, work.path()});
    ASSERT_TRUE(jvm.ready());
    ASSERT_EQ(jvm.ns_pid(), 1);
    const std::string proc = "/proc/" + std::to_string(jvm.pid());
    ASSERT_NE(mount_namespace(proc), our_namespace);
    auto threads = attach::thread_dump(jvm.pid());
    ASSERT_TRUE(threads) << threads.error().message;
    EXPECT_NE(threads->output.find("\"demo-worker-"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists("/tmp/.java_pid1"));  // the socket is in the container's /tmp
    EXPECT_TRUE(std::filesystem::exists(proc + "/root/tmp/.java_pid1"));

    scratch_dir out;
    auto r = attach::dump_heap(jvm.pid(), out.file("container.hprof"));
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->reply.status, 0);
    ASSERT_TRUE(r->written) << r->reply.output;
    EXPECT_TRUE(r->staged_path.starts_with("/tmp/heapd-dump-1-")) << r->staged_path;
    EXPECT_NE(r->reply.output.find(r->staged_path), std::string::npos) << r->reply.output;
    EXPECT_EQ(head(out.file("container.hprof"), 18), "JAVA PROFILE 1.0.2");
    EXPECT_FALSE(std::filesystem::exists(proc + "/root" + r->staged_path));  // removed in the container
    EXPECT_EQ(mount_namespace("/proc/self"), our_namespace);                 // only the helper process moved
    EXPECT_EQ(trigger_files(jvm.pid()), std::vector<std::string>{});
}

TEST(heap_dump, of_another_users_jvm_owned_by_the_caller) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root";
    temp_user user;
    ASSERT_TRUE(user.ok());
    isolated_jvm jvm(java_main{"AttachTarget"}, {"-Xmx64m"}, {}, isolation{&user, false, {}});
    ASSERT_TRUE(jvm.ready());
    scratch_dir out;  // the JVM's user could not write here
    auto r = attach::dump_heap(jvm.pid(), out.file("other.hprof"));
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_TRUE(r->written) << r->reply.output;
    EXPECT_FALSE(r->staged_path.empty());
    EXPECT_FALSE(std::filesystem::exists(r->staged_path));
    struct stat st {};
    ASSERT_EQ(::stat(r->path.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 0u);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_EQ(head(r->path, 18), "JAVA PROFILE 1.0.2");
    EXPECT_EQ(trigger_files(jvm.pid()), std::vector<std::string>{});
}

}  // namespace
}  // namespace heapd::test
