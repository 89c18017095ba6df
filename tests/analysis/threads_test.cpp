// Tests of thread reporting: frame formatting, JVMTI states, and threads collected from thread
// roots, Thread objects (with and without JDK 19's holder) and the old agent's START_THREAD records.
#include "analysis/threads.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "formats/hprof/heap_walk.h"
#include "formats/hprof/hprof_reader.h"
#include "support/hprof_builder.h"

namespace heapd {
namespace {

using test::byte_vector;
using test::hprof_builder;
using test::values;

constexpr std::uint8_t t_object = 2, t_boolean = 4, t_char = 5, t_byte = 8, t_int = 10, t_long = 11;

// UTF8 ids shared by the fixtures.
enum : std::uint64_t {
    n_object = 1,
    n_string,
    n_thread,
    n_worker,
    n_holder,
    n_inner,
    f_value = 10,
    f_coder,
    f_hash,
    f_name,
    f_priority,
    f_status,
    f_daemon,
    f_eetop,
    f_holder,
    f_tid,
    f_group,
    m_main = 30,
    m_run,
    m_wait,
    m_sleep,
    m_sig,
    s_worker,
    s_object,
    s_thread,
};
constexpr std::uint64_t object_class = 0x100, string_class = 0x101, thread_class = 0x102, worker_class = 0x103,
                        holder_class = 0x104, inner_class = 0x105;

// Names, classes, frames and traces common to the fixtures.
void declare_common(hprof_builder& b) {
    b.utf8(n_object, "java/lang/Object").utf8(n_string, "java/lang/String").utf8(n_thread, "java/lang/Thread");
    b.utf8(n_worker, "demo/Worker").utf8(n_holder, "java/lang/Thread$FieldHolder").utf8(n_inner, "demo/Outer$Inner");
    b.utf8(f_value, "value").utf8(f_coder, "coder").utf8(f_hash, "hash").utf8(f_name, "name");
    b.utf8(f_priority, "priority").utf8(f_status, "threadStatus").utf8(f_daemon, "daemon").utf8(f_eetop, "eetop");
    b.utf8(f_holder, "holder").utf8(f_tid, "tid").utf8(f_group, "group");
    b.utf8(m_main, "main").utf8(m_run, "run").utf8(m_wait, "wait").utf8(m_sleep, "sleep").utf8(m_sig, "()V");
    b.utf8(s_worker, "Worker.java").utf8(s_object, "Object.java").utf8(s_thread, "Thread.java");
    b.load_class(1, object_class, 0, n_object).load_class(2, string_class, 0, n_string);
    b.load_class(3, thread_class, 0, n_thread).load_class(5, worker_class, 0, n_worker);
    b.load_class(6, holder_class, 0, n_holder).load_class(7, inner_class, 0, n_inner);
    b.frame(0x900, m_wait, m_sig, s_object, 1, -3);
    b.frame(0x901, m_run, m_sig, s_worker, 5, 42);
    b.frame(0x902, m_run, m_sig, s_thread, 3, 833);
    b.frame(0x903, m_main, m_sig, s_worker, 5, 10);
    b.trace(101, 1, {0x903});
    b.trace(102, 2, {0x900, 0x902});
    b.trace(103, 3, {0x900, 0x901, 0x9FF, 0x902});
}

// java.lang.String with a byte[] value and a coder, as JDK 9 and later have it.
void compact_string(hprof_builder& b, std::uint64_t id, std::uint64_t value_id, std::uint8_t coder,
                    const byte_vector& bytes) {
    b.instance(id, string_class, values(b.id_size()).id(value_id).u1(coder).u4(0).bytes());
    b.primitive_array(value_id, t_byte, static_cast<std::uint32_t>(bytes.size()), bytes);
}

byte_vector latin1(std::string_view s) {
    byte_vector out;
    test::put_text(out, s);
    return out;
}

// Classes, thread roots and the index of a finished builder (which must outlive it).
struct loaded {
    explicit loaded(const hprof_builder& b)
        : reader(*hprof_reader::parse(b.span())), idx(record_index::build(reader)), classes(idx) {
        EXPECT_TRUE(idx.problems().empty());
        struct visitor : heap_visitor {
            class_table* classes;
            std::vector<root_view>* roots;
            void class_dump(const class_dump_view& c) { classes->add(c); }
            void root(const root_view& r) {
                if (r.kind == root_kind::thread_object) roots->push_back(r);
            }
        } v;
        v.classes = &classes;
        v.roots = &thread_roots;
        walk_heap(idx, v);
    }
    std::vector<thread_entry> threads() const { return collect_threads(idx, classes, thread_roots); }
    hprof_reader reader;
    record_index idx;
    class_table classes;
    std::vector<root_view> thread_roots;
};

// What a thread should look like.
struct expected_thread {
    std::uint32_t serial;
    std::uint64_t object_id;
    std::string name, state;
    std::optional<bool> daemon;
    std::vector<std::string> frames;
};

void expect_threads(const std::vector<thread_entry>& got, const std::vector<expected_thread>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        SCOPED_TRACE("thread " + std::to_string(i));
        EXPECT_EQ(got[i].serial, want[i].serial);
        EXPECT_EQ(got[i].object_id, want[i].object_id);
        EXPECT_EQ(got[i].name, want[i].name);
        EXPECT_EQ(got[i].state, want[i].state);
        EXPECT_EQ(got[i].daemon, want[i].daemon);
        EXPECT_EQ(got[i].frames, want[i].frames);
    }
}

const std::vector<std::string> main_frames = {"demo.Worker.main(Worker.java:10)"};
const std::vector<std::string> handler_frames = {"java.lang.Object.wait(Native Method)",
                                                 "java.lang.Thread.run(Thread.java:833)"};
const std::vector<std::string> worker_frames = {"java.lang.Object.wait(Native Method)",
                                                "demo.Worker.run(Worker.java:42)", "<missing frame>",
                                                "java.lang.Thread.run(Thread.java:833)"};

TEST(format_frame, prints_frames_as_java_stack_traces_do) {
    hprof_builder b(8);
    declare_common(b);
    b.utf8(50, "Outer.java");
    b.frame(0xA00, m_run, m_sig, s_worker, 5, 42);
    b.frame(0xA01, m_run, m_sig, s_worker, 5, 0);
    b.frame(0xA02, m_run, m_sig, s_worker, 5, -1);
    b.frame(0xA03, m_run, m_sig, s_worker, 5, -2);
    b.frame(0xA04, m_run, m_sig, 0, 5, -2);
    b.frame(0xA05, m_wait, m_sig, s_object, 1, -3);
    b.frame(0xA06, m_wait, m_sig, 0, 1, -3);
    b.frame(0xA07, m_run, m_sig, 0, 5, 17);
    b.frame(0xA08, m_run, m_sig, 0, 5, 0);
    b.frame(0xA09, m_run, m_sig, s_worker, 99, 42);
    b.frame(0xA0A, m_run, m_sig, 50, 7, 3);
    auto reader = hprof_reader::parse(b.span());
    ASSERT_TRUE(reader.has_value());
    record_index idx = record_index::build(*reader);
    const std::pair<std::uint64_t, const char*> cases[] = {
        {0xA00, "demo.Worker.run(Worker.java:42)"},      {0xA01, "demo.Worker.run(Worker.java)"},
        {0xA02, "demo.Worker.run(Unknown Source)"},      {0xA03, "demo.Worker.run(Worker.java:compiled)"},
        {0xA04, "demo.Worker.run(Compiled method)"},     {0xA05, "java.lang.Object.wait(Native Method)"},
        {0xA06, "java.lang.Object.wait(Native Method)"}, {0xA07, "demo.Worker.run(Unknown Source)"},
        {0xA08, "demo.Worker.run(Unknown Source)"},      {0xA09, "<unknown class>.run(Worker.java:42)"},
        {0xA0A, "demo.Outer$Inner.run(Outer.java:3)"},
    };
    for (auto [id, text] : cases) {
        const frame_info* f = idx.frame(id);
        ASSERT_NE(f, nullptr);
        EXPECT_EQ(format_frame(idx, *f), text);
    }
}

TEST(thread_state_name, maps_jvmti_status_words_to_thread_states) {
    EXPECT_EQ(thread_state_name(0), "NEW");
    EXPECT_EQ(thread_state_name(0x1), "RUNNABLE");
    EXPECT_EQ(thread_state_name(0x5), "RUNNABLE");
    EXPECT_EQ(thread_state_name(0x405), "RUNNABLE");  // the runnable bit wins
    EXPECT_EQ(thread_state_name(0x2), "TERMINATED");
    EXPECT_EQ(thread_state_name(0x191), "WAITING");        // Object.wait()
    EXPECT_EQ(thread_state_name(0x291), "WAITING");        // LockSupport.park()
    EXPECT_EQ(thread_state_name(0x2A1), "TIMED_WAITING");  // Thread.sleep()
    EXPECT_EQ(thread_state_name(0x1A1), "TIMED_WAITING");  // Object.wait(long)
    EXPECT_EQ(thread_state_name(0x401), "BLOCKED");
}

TEST(collect_threads, reads_names_states_daemon_flags_and_stacks_from_thread_objects) {
    hprof_builder b(8);
    declare_common(b);
    b.begin_segment();
    b.class_dump(object_class, 0, {});
    b.class_dump(string_class, object_class, {{f_value, t_object}, {f_coder, t_byte}, {f_hash, t_int}});
    b.class_dump(
        thread_class, object_class,
        {{f_name, t_object}, {f_priority, t_int}, {f_daemon, t_boolean}, {f_eetop, t_long}, {f_status, t_int}});
    b.root_thread_object(0x5000, 1, 101).root_thread_object(0x5010, 2, 102);
    b.root_thread_object(0x5020, 3, 103).root_thread_object(0x5030, 4, 0);
    b.root_thread_object(0x5000, 9, 101);  // a second root of the same thread object
    b.instance(0x5000, thread_class, values(8).id(0x6000).u4(5).u1(0).u8(0x7f00).u4(0x5).bytes());
    b.instance(0x5010, thread_class, values(8).id(0x6010).u4(10).u1(1).u8(0x7f01).u4(0x191).bytes());
    b.end_segment();
    b.begin_segment();  // names in a later segment than the threads
    b.instance(0x5020, thread_class, values(8).id(0x6020).u4(5).u1(1).u8(0x7f02).u4(0x2A1).bytes());
    b.instance(0x5030, thread_class, values(8).id(0).u4(5).u1(0).u8(0x7f03).u4(0x401).bytes());
    compact_string(b, 0x6000, 0x7000, 0, latin1("main"));
    compact_string(b, 0x6010, 0x7010, 0, latin1("Reference Handler"));
    // "Wörker-世界" in UTF-16, little-endian.
    compact_string(b, 0x6020, 0x7020, 1,
                   values()
                       .u1('W')
                       .u1(0)
                       .u1(0xF6)
                       .u1(0)
                       .u1('r')
                       .u1(0)
                       .u1('k')
                       .u1(0)
                       .u1('e')
                       .u1(0)
                       .u1('r')
                       .u1(0)
                       .u1('-')
                       .u1(0)
                       .u1(0x16)
                       .u1(0x4E)
                       .u1(0x4C)
                       .u1(0x75)
                       .bytes());
    b.end_segment();
    loaded l(b);
    ASSERT_EQ(l.thread_roots.size(), 5u);
    expect_threads(l.threads(),
                   {
                       {1, 0x5000, "main", "RUNNABLE", false, main_frames},
                       {2, 0x5010, "Reference Handler", "WAITING", true, handler_frames},
                       {3, 0x5020, "W\xC3\xB6rker-\xE4\xB8\x96\xE7\x95\x8C", "TIMED_WAITING", true, worker_frames},
                       {4, 0x5030, "<thread 4>", "BLOCKED", false, {}},
                   });
}

TEST(collect_threads, reads_state_and_daemon_from_the_holder_of_jdk19_threads) {
    hprof_builder b(8);
    declare_common(b);
    b.begin_segment();
    b.class_dump(object_class, 0, {});
    b.class_dump(string_class, object_class, {{f_value, t_object}, {f_coder, t_byte}, {f_hash, t_int}});
    b.class_dump(thread_class, object_class,
                 {{f_eetop, t_long}, {f_tid, t_long}, {f_name, t_object}, {f_holder, t_object}});
    b.class_dump(holder_class, object_class,
                 {{f_group, t_object}, {f_priority, t_int}, {f_daemon, t_boolean}, {f_status, t_int}});
    b.root_thread_object(0x5000, 1, 101).root_thread_object(0x5010, 2, 102).root_thread_object(0x5020, 3, 0);
    b.instance(0x5000, thread_class, values(8).u8(1).u8(1).id(0x6000).id(0x5100).bytes());
    b.instance(0x5010, thread_class, values(8).u8(2).u8(9).id(0x6010).id(0x5110).bytes());
    b.instance(0x5020, thread_class, values(8).u8(3).u8(10).id(0x6020).id(0).bytes());  // no holder yet
    b.instance(0x5100, holder_class, values(8).id(0x4000).u4(5).u1(0).u4(0x5).bytes());
    b.instance(0x5110, holder_class, values(8).id(0x4000).u4(8).u1(1).u4(0x2A1).bytes());
    compact_string(b, 0x6000, 0x7000, 0, latin1("main"));
    compact_string(b, 0x6010, 0x7010, 0, latin1("Common-Cleaner"));
    compact_string(b, 0x6020, 0x7020, 0, latin1("starting"));
    b.end_segment();
    loaded l(b);
    expect_threads(l.threads(), {
                                    {1, 0x5000, "main", "RUNNABLE", false, main_frames},
                                    {2, 0x5010, "Common-Cleaner", "TIMED_WAITING", true, handler_frames},
                                    {3, 0x5020, "starting", "", std::nullopt, {}},
                                });
}

TEST(collect_threads, names_threads_of_the_old_agent_from_start_thread_records) {
    hprof_builder b(4, "JAVA PROFILE 1.0.1");
    declare_common(b);
    b.utf8(0x40, "main").utf8(0x41, "Finalizer").utf8(0x42, "system");
    b.start_thread(1, 0x500, 101, 0x40, 0x42, 0);
    b.start_thread(2, 0x510, 102, 0x41, 0x42, 0);
    b.begin_segment().root_unknown(0x500).end_segment();  // no Thread objects in the heap
    loaded l(b);
    expect_threads(l.threads(), {
                                    {1, 0x500, "main", "", std::nullopt, main_frames},
                                    {2, 0x510, "Finalizer", "", std::nullopt, handler_frames},
                                });
}

TEST(collect_threads, a_start_thread_of_a_rooted_thread_object_joins_it) {
    hprof_builder b(8);
    declare_common(b);
    b.utf8(0x40, "agent-name");
    b.start_thread(7, 0x5000, 103, 0x40, 0, 0);
    b.begin_segment().root_thread_object(0x5000, 1, 101).end_segment();
    loaded l(b);
    // The root's serial and trace stand; the name comes from START_THREAD.
    expect_threads(l.threads(), {{1, 0x5000, "agent-name", "", std::nullopt, main_frames}});
}

TEST(collect_threads, jdk6_thread_names_are_char_arrays) {
    hprof_builder b(8);
    declare_common(b);
    b.begin_segment();
    b.class_dump(object_class, 0, {});
    b.class_dump(thread_class, object_class, {{f_name, t_object}, {f_daemon, t_boolean}, {f_status, t_int}});
    b.root_thread_object(0x5000, 1, 101);
    b.instance(0x5000, thread_class, values(8).id(0x7000).u1(1).u4(0x2).bytes());
    b.primitive_array(0x7000, t_char, 3, values().u2('g').u2(0xE9).u2('c').bytes());
    b.end_segment();
    loaded l(b);
    expect_threads(l.threads(), {{1, 0x5000,
                                  "g\xC3\xA9"
                                  "c",
                                  "TERMINATED", true, main_frames}});
}

TEST(collect_threads, jdk8_thread_names_are_strings_over_char_arrays) {
    hprof_builder b(4, "JAVA PROFILE 1.0.2");
    declare_common(b);
    b.begin_segment();
    b.class_dump(object_class, 0, {});
    b.class_dump(string_class, object_class, {{f_value, t_object}, {f_hash, t_int}});
    b.class_dump(thread_class, object_class, {{f_name, t_object}, {f_daemon, t_boolean}, {f_status, t_int}});
    b.root_thread_object(0x5000, 2, 102);
    b.instance(0x5000, thread_class, values(4).id(0x6000).u1(1).u4(0x191).bytes());
    b.instance(0x6000, string_class, values(4).id(0x7000).u4(0).bytes());
    b.primitive_array(0x7000, t_char, 9,
                      values().u2('F').u2('i').u2('n').u2('a').u2('l').u2('i').u2('z').u2('e').u2('r').bytes());
    b.end_segment();
    loaded l(b);
    expect_threads(l.threads(), {{2, 0x5000, "Finalizer", "WAITING", true, handler_frames}});
}

TEST(collect_threads, strings_with_offset_and_count_name_their_range_of_the_array) {
    // JDK 6's and old Android's Strings: the name is count chars from offset of a shared char[].
    constexpr std::uint64_t f_offset = 90, f_count = 91;
    hprof_builder b(4, "JAVA PROFILE 1.0.2");
    declare_common(b);
    b.utf8(f_offset, "offset").utf8(f_count, "count");
    b.begin_segment();
    b.class_dump(object_class, 0, {});
    b.class_dump(string_class, object_class,
                 {{f_value, t_object}, {f_offset, t_int}, {f_count, t_int}, {f_hash, t_int}});
    b.class_dump(thread_class, object_class, {{f_name, t_object}, {f_daemon, t_boolean}, {f_status, t_int}});
    b.root_thread_object(0x5000, 2, 102);
    b.instance(0x5000, thread_class, values(4).id(0x6000).u1(1).u4(0x191).bytes());
    b.instance(0x6000, string_class, values(4).id(0x7000).u4(2).u4(9).u4(0).bytes());
    test::values chars;
    for (char c : std::string_view("[ Finalizer ]")) chars.u2(static_cast<std::uint16_t>(c));
    b.primitive_array(0x7000, t_char, 13, chars.bytes());
    b.end_segment();
    loaded l(b);
    expect_threads(l.threads(), {{2, 0x5000, "Finalizer", "WAITING", true, handler_frames}});
}

TEST(collect_threads, an_empty_dump_has_no_threads) {
    hprof_builder b(8);
    loaded l(b);
    EXPECT_TRUE(l.threads().empty());
}

TEST(collect_threads, start_threads_without_thread_objects_keep_their_own_names) {
    hprof_builder b(4, "JAVA PROFILE 1.0.1");
    declare_common(b);
    b.utf8(0x40, "alpha").utf8(0x41, "beta");
    b.start_thread(1, 0, 101, 0x40, 0, 0);
    b.start_thread(2, 0, 102, 0x41, 0, 0);
    loaded l(b);
    expect_threads(l.threads(), {
                                    {1, 0, "alpha", "", std::nullopt, main_frames},
                                    {2, 0, "beta", "", std::nullopt, handler_frames},
                                });
}

}  // namespace
}  // namespace heapd
