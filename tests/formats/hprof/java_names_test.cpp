// Tests of JVM internal names turned into Java source form.
#include "formats/hprof/java_names.h"

#include <gtest/gtest.h>

namespace heapd {
namespace {

TEST(java_names, plain_classes_get_dots) {
    EXPECT_EQ(java_class_name("java/lang/String"), "java.lang.String");
    EXPECT_EQ(java_class_name("java/util/HashMap$Node"), "java.util.HashMap$Node");
    EXPECT_EQ(java_class_name("Hello"), "Hello");
    EXPECT_EQ(java_class_name("java.lang.Object"), "java.lang.Object");
    EXPECT_EQ(java_class_name(""), "");
}

TEST(java_names, primitive_arrays) {
    EXPECT_EQ(java_class_name("[I"), "int[]");
    EXPECT_EQ(java_class_name("[Z"), "boolean[]");
    EXPECT_EQ(java_class_name("[C"), "char[]");
    EXPECT_EQ(java_class_name("[F"), "float[]");
    EXPECT_EQ(java_class_name("[D"), "double[]");
    EXPECT_EQ(java_class_name("[B"), "byte[]");
    EXPECT_EQ(java_class_name("[S"), "short[]");
    EXPECT_EQ(java_class_name("[J"), "long[]");
    EXPECT_EQ(java_class_name("[[[J"), "long[][][]");
}

TEST(java_names, object_arrays) {
    EXPECT_EQ(java_class_name("[Ljava/lang/Object;"), "java.lang.Object[]");
    EXPECT_EQ(java_class_name("[[Ljava/lang/Object;"), "java.lang.Object[][]");
    EXPECT_EQ(java_class_name("[Ljava/util/HashMap$Node;"), "java.util.HashMap$Node[]");
}

TEST(java_names, hidden_classes_keep_their_slash) {
    EXPECT_EQ(java_class_name("Foo$$Lambda$14+0x0000000800c03000"), "Foo$$Lambda$14/0x0000000800c03000");
    EXPECT_EQ(java_class_name("com/acme/Foo$$Lambda$14+0x0000000800c03000"),
              "com.acme.Foo$$Lambda$14/0x0000000800c03000");
    EXPECT_EQ(java_class_name("[Lcom/acme/Foo$$Lambda$7+0x0000000800c01234;"),
              "com.acme.Foo$$Lambda$7/0x0000000800c01234[]");
    // A '+' that does not start a hidden-class suffix stays.
    EXPECT_EQ(java_class_name("demo/A+B"), "demo.A+B");
}

TEST(java_names, same_class_name_compares_slash_form_with_dot_form) {
    EXPECT_TRUE(same_class_name("java/lang/String", "java.lang.String"));
    EXPECT_TRUE(same_class_name("java.lang.String", "java.lang.String"));
    EXPECT_TRUE(same_class_name("[I", "[I"));
    EXPECT_FALSE(same_class_name("java/lang/String", "java.lang.Strin"));
    EXPECT_FALSE(same_class_name("java/lang/String", "java.lang.StringBuilder"));
    EXPECT_FALSE(same_class_name("java/lang/String", "java.lang.Object"));
}

}  // namespace
}  // namespace heapd
