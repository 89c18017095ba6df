// Tests of HotSpot object layouts: array sizes, instance field packing, @Contended and mirrors.
#include "formats/hprof/object_layout.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "formats/hprof/basic_type.h"
#include "support/hprof_builder.h"

namespace heapd {
namespace {

constexpr std::uint8_t t_object = 2, t_boolean = 4, t_char = 5, t_float = 6, t_double = 7, t_byte = 8, t_short = 9,
                       t_int = 10, t_long = 11;

const vm_layout& compressed() { return candidate_layouts(8)[0]; }
const vm_layout& uncompressed() { return candidate_layouts(8)[1]; }
const vm_layout& wide_headers() { return candidate_layouts(8)[2]; }
const vm_layout& bits32() { return candidate_layouts(4)[0]; }
const vm_layout& compact() { return candidate_layouts(8)[3]; }
const vm_layout& compact_uncompressed() { return candidate_layouts(8)[4]; }

TEST(object_layout, candidate_layouts_per_id_size) {
    ASSERT_EQ(candidate_layouts(8).size(), 5u);
    ASSERT_EQ(candidate_layouts(4).size(), 1u);
    EXPECT_LE(candidate_layouts(8).size(), max_candidate_layouts);
    EXPECT_EQ(compressed().name, "64-bit, compressed oops");
    EXPECT_EQ(compressed().oop_size, 4u);
    EXPECT_EQ(compressed().header_size, 12u);
    EXPECT_EQ(uncompressed().oop_size, 8u);
    EXPECT_EQ(uncompressed().header_size, 12u);
    EXPECT_EQ(wide_headers().oop_size, 8u);
    EXPECT_EQ(wide_headers().header_size, 16u);
    EXPECT_EQ(bits32().name, "32-bit");
    EXPECT_EQ(bits32().oop_size, 4u);
    EXPECT_EQ(bits32().header_size, 8u);
    EXPECT_EQ(bits32().word_size, 4u);
    EXPECT_EQ(compact().name, "64-bit, compact object headers, compressed oops");
    EXPECT_EQ(compact().header_size, 8u);
    EXPECT_EQ(compact().oop_size, 4u);
    EXPECT_EQ(compact().first_java, 24u);
    EXPECT_EQ(compact_uncompressed().oop_size, 8u);
}

// JEP 519's sizes as the JVM reports them (GC.class_histogram of JDK 25 with
// -XX:+UseCompactObjectHeaders): new Object() 8, Integer 16, byte[1] 16, int[0] 16, Object[3] 24.
TEST(object_layout, compact_headers_size_arrays_from_twelve_bytes) {
    EXPECT_EQ(array_shallow_size(compact(), t_byte, 1), 16u);
    EXPECT_EQ(array_shallow_size(compact(), t_byte, 4), 16u);
    EXPECT_EQ(array_shallow_size(compact(), t_byte, 5), 24u);
    EXPECT_EQ(array_shallow_size(compact(), t_int, 0), 16u);
    EXPECT_EQ(array_shallow_size(compact(), t_int, 1), 16u);
    EXPECT_EQ(array_shallow_size(compact(), t_long, 1), 24u);
    EXPECT_EQ(array_shallow_size(compact(), t_object, 3), 24u);
    EXPECT_EQ(array_shallow_size(compact_uncompressed(), t_object, 1), 24u);
}

TEST(object_layout, array_shallow_size_for_every_layout) {
    struct expected {
        std::uint8_t type;
        std::uint32_t length;
        std::uint64_t c, u, w, b32;
    };
    const expected cases[] = {
        {t_object, 0, 16, 16, 24, 16},
        {t_object, 3, 32, 40, 48, 24},
        {t_boolean, 1, 24, 24, 32, 16},
        {t_char, 5, 32, 32, 40, 24},
        {t_float, 2, 24, 24, 32, 24},
        {t_double, 0, 16, 16, 24, 16},
        {t_byte, 8, 24, 24, 32, 24},
        {t_short, 3, 24, 24, 32, 24},
        {t_int, 1, 24, 24, 32, 16},
        {t_int, 10, 56, 56, 64, 56},
        {t_long, 1, 24, 24, 32, 24},
        {t_byte, 0xFFFFFFFFu, 4294967312u, 4294967312u, 4294967320u, 4294967312u},
        {t_long, 0xFFFFFFFFu, 34359738376u, 34359738376u, 34359738384u, 34359738376u},
    };
    for (const expected& e : cases) {
        SCOPED_TRACE(std::to_string(e.type) + "[" + std::to_string(e.length) + "]");
        EXPECT_EQ(array_shallow_size(compressed(), e.type, e.length), e.c);
        EXPECT_EQ(array_shallow_size(uncompressed(), e.type, e.length), e.u);
        EXPECT_EQ(array_shallow_size(wide_headers(), e.type, e.length), e.w);
        EXPECT_EQ(array_shallow_size(bits32(), e.type, e.length), e.b32);
    }
}

// A class to put in a synthetic dump: fields in declaration order (written reversed, as HotSpot does).
struct class_def {
    std::uint64_t id;
    std::uint64_t super_id;
    std::string name;
    std::vector<std::pair<std::string, std::uint8_t>> fields;
    std::vector<std::pair<std::string, std::uint8_t>> statics;
};

// A dump holding only the given classes, indexed, with its class table filled.
class class_dump_fixture {
public:
    class_dump_fixture(unsigned id_size, const std::vector<class_def>& defs) : builder_(id_size) {
        std::uint64_t next_name = 1;
        std::vector<test::class_spec> specs;
        for (const class_def& d : defs) {
            builder_.utf8(next_name, d.name).load_class(static_cast<std::uint32_t>(next_name), d.id, 0, next_name);
            ++next_name;
            test::class_spec s;
            s.class_id = d.id;
            s.super_id = d.super_id;
            for (auto it = d.fields.rbegin(); it != d.fields.rend(); ++it) {
                builder_.utf8(next_name, it->first);
                s.fields.push_back({next_name++, it->second});
            }
            for (const auto& [name, type] : d.statics) {
                builder_.utf8(next_name, name);
                s.statics.push_back({next_name++, type, test::byte_vector(value_size(type, id_size))});
            }
            specs.push_back(std::move(s));
        }
        builder_.begin_segment();
        for (const auto& s : specs) builder_.class_dump(s);
        builder_.end_segment();
        auto reader = hprof_reader::parse(builder_.span());
        EXPECT_TRUE(reader.has_value());
        index_ = record_index::build(*reader);
        add_class_dumps(index_, classes_);
        EXPECT_EQ(classes_.size(), defs.size());
    }
    class_dump_fixture(const class_dump_fixture&) = delete;

    const class_table& classes() const { return classes_; }
    layout_model model(const vm_layout& l, field_rules rules = {}) const { return layout_model(classes_, l, rules); }

private:
    test::hprof_builder builder_;
    record_index index_;
    class_table classes_{index_};
};

constexpr std::uint64_t object_id = 0x10;

std::vector<class_def> plain_classes() {
    return {
        {object_id, 0, "java/lang/Object", {}, {}},
        {0x20, object_id, "demo/LongInt", {{"a", t_long}, {"b", t_int}}, {}},
        {0x30, object_id, "demo/Parent", {{"a", t_long}}, {}},
        {0x31, 0x30, "demo/OneInt", {{"c", t_int}}, {}},
        {0x32, 0x30, "demo/TwoInts", {{"c", t_int}, {"d", t_int}}, {}},
        {0x40, object_id, "demo/ByteLong", {{"b", t_byte}, {"l", t_long}}, {}},
        {0x41, 0x40, "demo/ShortByte", {{"s", t_short}, {"x", t_byte}}, {}},
        {0x50, object_id, "demo/RefByte", {{"o", t_object}, {"b", t_byte}}, {}},
        {0x60,
         object_id,
         "java/lang/String",
         {{"value", t_object}, {"coder", t_byte}, {"hash", t_int}, {"hashIsZero", t_boolean}},
         {}},
    };
}

TEST(object_layout, long_and_int_fill_the_header_gap) {
    class_dump_fixture d(8, plain_classes());
    EXPECT_EQ(d.model(compressed()).instance_size(0x20), 24u);  // a at 16, b in the gap at 12
    EXPECT_EQ(d.model(uncompressed()).instance_size(0x20), 24u);
    EXPECT_EQ(d.model(wide_headers()).instance_size(0x20), 32u);  // 16 + 8 + 4
    class_dump_fixture d32(4, plain_classes());
    EXPECT_EQ(d32.model(bits32()).instance_size(0x20), 24u);  // 8 + 8 + 4
}

TEST(object_layout, subclass_fields_fill_holes_left_by_the_super) {
    class_dump_fixture d(8, plain_classes());
    layout_model c = d.model(compressed());
    EXPECT_EQ(c.instance_size(0x30), 24u);  // long at 16, a 4-byte hole at 12
    EXPECT_EQ(c.instance_size(0x31), 24u);  // c goes into the hole
    EXPECT_EQ(c.instance_size(0x32), 32u);  // c in the hole, d at 24
    EXPECT_EQ(c.instance_size(0x40), 24u);  // l at 16, b at 12, hole 13..16
    EXPECT_EQ(c.instance_size(0x41), 24u);  // s at 14, x at 13
    layout_model w = d.model(wide_headers());
    EXPECT_EQ(w.instance_size(0x30), 24u);  // no hole with a 16-byte header
    EXPECT_EQ(w.instance_size(0x31), 32u);
    EXPECT_EQ(w.instance_size(0x41), 32u);
}

TEST(object_layout, references_follow_primitives_at_the_oop_size) {
    class_dump_fixture d(8, plain_classes());
    EXPECT_EQ(d.model(compressed()).instance_size(0x50), 24u);    // b at 12, o at 16..20
    EXPECT_EQ(d.model(uncompressed()).instance_size(0x50), 24u);  // b at 12, o at 16..24
    EXPECT_EQ(d.model(wide_headers()).instance_size(0x50), 32u);  // b at 16, o at 24..32
}

TEST(object_layout, injected_fields_count) {
    class_dump_fixture d(8, plain_classes());
    EXPECT_EQ(d.model(compressed()).instance_size(0x60), 24u);  // + the injected byte flags
    EXPECT_EQ(d.model(uncompressed()).instance_size(0x60), 32u);
}

TEST(object_layout, classes_missing_from_the_dump_are_bare_objects) {
    class_dump_fixture d(8, plain_classes());
    EXPECT_EQ(d.model(compressed()).instance_size(0x999), 16u);
    EXPECT_EQ(d.model(wide_headers()).instance_size(0x999), 16u);
    EXPECT_EQ(d.model(compressed()).instance_size(object_id), 16u);
    class_dump_fixture d32(4, plain_classes());
    EXPECT_EQ(d32.model(bits32()).instance_size(0x999), 8u);
}

std::vector<class_def> thread_classes() {
    const std::vector<std::pair<std::string, std::uint8_t>> fields = {{"name", t_object},
                                                                      {"tid", t_long},
                                                                      {"priority", t_int},
                                                                      {"threadLocalRandomSeed", t_long},
                                                                      {"threadLocalRandomProbe", t_int},
                                                                      {"threadLocalRandomSecondarySeed", t_int}};
    return {
        {object_id, 0, "java/lang/Object", {}, {}},
        {0x70, object_id, "java/lang/Thread", fields, {}},
        {0x71, 0x70, "demo/Worker", {{"x", t_int}}, {}},
        {0x72, object_id, "demo/Thread", fields, {}},
    };
}

TEST(object_layout, contended_thread_fields_are_padded) {
    class_dump_fixture d(8, thread_classes());
    layout_model c = d.model(compressed(), field_rules{17});
    // Not a JDK class: tid 16, priority 12, seed 24, probe 32, secondary 36, name 40 -> 48.
    EXPECT_EQ(c.instance_size(0x72), 48u);
    // java.lang.Thread: regular fields end at 28, then 128 padding, the group at 160..176, 128 padding.
    EXPECT_EQ(c.instance_size(0x70), 304u);
    // A subclass only appends after the padded end.
    EXPECT_EQ(c.instance_size(0x71), 312u);
}

TEST(object_layout, contended_subclass_laid_out_before_its_super) {
    class_dump_fixture d(8, thread_classes());
    layout_model c = d.model(compressed(), field_rules{17});
    EXPECT_EQ(c.instance_size(0x71), 312u);
    EXPECT_EQ(c.instance_size(0x70), 304u);
}

TEST(object_layout, jdk_19_and_later_pad_no_thread_field_and_inject_jvmti_state) {
    class_dump_fixture d(8, thread_classes());
    layout_model c = d.model(compressed(), field_rules{25});
    // tid 16, seed 24, jvmti_thread_state 32; priority 12, probe 40, secondary 44, disable count 48;
    // jfr_epoch 52, the boolean 54; name 56 -> 60 -> 64.
    EXPECT_EQ(c.instance_size(0x70), 64u);
    EXPECT_EQ(c.instance_size(0x71), 64u);  // x at 60
    EXPECT_EQ(c.instance_size(0x72), 48u);  // not the JDK's Thread: nothing injected
}

// ForkJoinPool$WorkQueue pads a named group; SubmissionPublisher$BufferedSubscription is contended
// as a whole and has a group besides.
TEST(object_layout, contended_groups_and_whole_classes_with_groups) {
    const std::vector<class_def> defs = {
        {object_id, 0, "java/lang/Object", {}, {}},
        {0xA0,
         object_id,
         "java/util/concurrent/ForkJoinPool$WorkQueue",
         {{"array", t_object}, {"top", t_int}, {"base", t_int}, {"nsteals", t_int}},
         {}},
        {0xA1,
         object_id,
         "java/util/concurrent/SubmissionPublisher$BufferedSubscription",
         {{"timeout", t_long}, {"demand", t_long}, {"waiting", t_int}},
         {}},
    };
    class_dump_fixture d(8, defs);
    layout_model c = d.model(compressed(), field_rules{25});
    // base 12, array 16 -> 20; padding to 148; top 148, nsteals 152 -> 156; padding to 284 -> 288.
    EXPECT_EQ(c.instance_size(0xA0), 288u);
    // padding 12..140; timeout 144 (aligned); padding 152..280; demand 280, waiting 288 -> 292;
    // padding to 420 -> 424.
    EXPECT_EQ(c.instance_size(0xA1), 424u);
}

// JDK 25 declares ResolvedMethodName.vmholder, which older releases inject: counted once.
TEST(object_layout, an_injected_field_the_class_declares_is_not_added_twice) {
    const std::vector<class_def> defs = {
        {object_id, 0, "java/lang/Object", {}, {}},
        {0xB8, object_id, "java/lang/invoke/ResolvedMethodName", {{"vmholder", t_object}}, {}},
        {0xB9, object_id, "java/lang/invoke/ResolvedMethodName", {}, {}},
    };
    class_dump_fixture d(8, defs);
    EXPECT_EQ(d.model(compressed(), field_rules{25}).instance_size(0xB8), 24u);  // 12 + 4 + 8
    EXPECT_EQ(d.model(compressed(), field_rules{17}).instance_size(0xB9), 24u);  // both injected
}

TEST(object_layout, compact_headers_put_the_first_field_at_eight) {
    class_dump_fixture d(8, plain_classes());
    EXPECT_EQ(d.model(compact()).instance_size(object_id), 8u);
    EXPECT_EQ(d.model(compact()).instance_size(0x20), 24u);               // a 8..16, b 16..20
    EXPECT_EQ(d.model(compact()).instance_size(0x50), 16u);               // o 8, b 12
    EXPECT_EQ(d.model(compact_uncompressed()).instance_size(0x50), 24u);  // o 8..16, b 16
}

TEST(object_layout, mirror_size_adds_statics_to_the_class_object) {
    std::vector<class_def> defs = {
        {object_id, 0, "java/lang/Object", {}, {}},
        {0x80, object_id, "demo/RefAndInt", {}, {{"o", t_object}, {"i", t_int}}},
        {0x81,
         object_id,
         "demo/Prims",
         {},
         {{"b", t_byte},
          {"l", t_long},
          {"s", t_short},
          {"<resolved_references>", t_object},
          {"<init_lock>", t_object}}},
        {0x82, object_id, "[I", {}, {}},
    };
    class_dump_fixture d(8, defs);
    layout_model c = d.model(compressed());
    layout_model u = d.model(uncompressed());
    EXPECT_EQ(c.mirror_size(object_id, 48), 48u);
    EXPECT_EQ(c.mirror_size(0x80, 48), 56u);  // o 48..52, i 52..56
    EXPECT_EQ(u.mirror_size(0x80, 48), 64u);  // o 48..56, i 56..60
    EXPECT_EQ(c.mirror_size(0x81, 48), 64u);  // l 48..56, s 56..58, b 58; VM-internal statics left out
    EXPECT_EQ(c.mirror_size(0x82, 48), 48u);  // array classes have no statics
    EXPECT_EQ(c.mirror_size(0x999, 40), 40u);
}

// Before JDK 15 each class's fields start where its super's end (rounded to a reference) and fill
// no hole the super left; the sizes below are those published from HotSpot 7/8 under hsdb (compressed
// oops), and those Eclipse MAT asserts for JDK 6 (ArrayList, 64-bit without compressed oops).
std::vector<class_def> old_layout_classes() {
    return {
        {object_id, 0, "java/lang/Object", {}, {}},
        {0x90,
         object_id,
         "demo/MemoryLayoutDefault",
         {{"a", t_byte},
          {"c", t_int},
          {"d", t_boolean},
          {"e", t_long},
          {"_string", t_object},
          {"_int", t_object},
          {"_long", t_object},
          {"_string2", t_object}},
         {}},
        {0x91,
         0x90,
         "demo/SubMemoryLayout",
         {{"sub_c", t_int}, {"sub_e", t_long}, {"_sub_int", t_object}, {"_sub_long", t_object}},
         {}},
        {0xA0, object_id, "java/util/AbstractList", {{"modCount", t_int}}, {}},
        {0xA1, 0xA0, "java/util/ArrayList", {{"elementData", t_object}, {"size", t_int}}, {}},
        {0xB0, object_id, "java/lang/Integer", {{"a", t_int}, {"b", t_long}}, {}},
        {0xB1, object_id, "demo/IntLong", {{"a", t_int}, {"b", t_long}}, {}},
        {0xC0,
         object_id,
         "java/lang/String",
         {{"value", t_object}, {"offset", t_int}, {"count", t_int}, {"hash", t_int}},
         {}},
    };
}

TEST(object_layout, before_jdk_15_a_class_starts_after_its_super) {
    class_dump_fixture d(8, old_layout_classes());
    layout_model jdk8 = d.model(compressed(), field_rules{8});
    EXPECT_EQ(jdk8.instance_size(0x90), 48u);  // c in the gap at 12, e 16, a d 24..26, refs 28..44
    EXPECT_EQ(jdk8.instance_size(0x91), 64u);  // from 44: sub_c 44, sub_e 48, refs 56..64
    layout_model jdk6 = d.model(wide_headers(), field_rules{6});
    EXPECT_EQ(jdk6.instance_size(0xA1), 40u);  // modCount 16..20; from 24: size 24, elementData 32..40
    EXPECT_EQ(d.model(wide_headers()).instance_size(0xA1), 32u);  // JDK 15+: size in the hole at 20
}

TEST(object_layout, before_jdk_15_boot_classes_with_fixed_offsets_fill_no_gap) {
    class_dump_fixture d(8, old_layout_classes());
    layout_model jdk8 = d.model(compressed(), field_rules{8});
    EXPECT_EQ(jdk8.instance_size(0xB0), 32u);  // b at 16 (no int in the gap at 12), a 24..28
    EXPECT_EQ(jdk8.instance_size(0xB1), 24u);  // a in the gap at 12, b 16..24
    EXPECT_EQ(d.model(compressed(), field_rules{17}).instance_size(0xB0), 24u);
}

TEST(object_layout, injected_fields_follow_the_release) {
    class_dump_fixture d32(4, old_layout_classes());
    // JDK 6 on 32 bits, as MAT's tests say: 8 + value + offset + count + hash = 24; JDK 17 adds a byte.
    EXPECT_EQ(d32.model(bits32(), field_rules{6}).instance_size(0xC0), 24u);
    EXPECT_EQ(d32.model(bits32(), field_rules{17}).instance_size(0xC0), 32u);
}

TEST(object_layout, contended_fields_are_padded_from_jdk_8) {
    class_dump_fixture d(8, thread_classes());
    // JDK 8: priority in the gap at 12, tid 16, name 24..28, 128 padding, the group 160..176, 128 padding.
    EXPECT_EQ(d.model(compressed(), field_rules{8}).instance_size(0x70), 304u);
    // JDK 7 knows no @Contended: priority 12, tid 16, seed 24, probe and secondary 32..40, name 40..44.
    EXPECT_EQ(d.model(compressed(), field_rules{7}).instance_size(0x70), 48u);
}

TEST(object_layout, jdk_6_keeps_statics_out_of_the_heap) {
    std::vector<class_def> defs = {{object_id, 0, "java/lang/Object", {}, {}},
                                   {0x80, object_id, "demo/RefAndInt", {}, {{"o", t_object}, {"i", t_int}}}};
    class_dump_fixture d(8, defs);
    EXPECT_EQ(d.model(compressed(), field_rules{6}).mirror_size(0x80, 48), 48u);
    EXPECT_EQ(d.model(compressed(), field_rules{7}).mirror_size(0x80, 48), 56u);
}

TEST(object_layout, a_release_is_guessed_from_the_fields_of_string) {
    class_dump_fixture old(8, old_layout_classes());
    EXPECT_EQ(guess_java_release(old.classes()).java_feature, 6u);
    class_dump_fixture recent(8, plain_classes());
    EXPECT_EQ(guess_java_release(recent.classes()).java_feature, 17u);
    EXPECT_EQ(guess_java_release(recent.classes()).releases, "13 to 18");
    // Thread keeps its platform fields in a holder from JDK 19.
    std::vector<class_def> loom = plain_classes();
    loom.push_back({0x70, object_id, "java/lang/Thread", {{"holder", t_object}}, {}});
    class_dump_fixture newest(8, loom);
    EXPECT_EQ(guess_java_release(newest.classes()).java_feature, 25u);
    EXPECT_EQ(guess_java_release(newest.classes()).releases, "19 or later");
    class_dump_fixture none(8, thread_classes());
    EXPECT_EQ(guess_java_release(none.classes()).java_feature, 0u);
}

}  // namespace
}  // namespace heapd
