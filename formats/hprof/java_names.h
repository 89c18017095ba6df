#pragma once
// Turns JVM internal class names and descriptors into Java source form.
#include <string>
#include <string_view>

namespace heapd {
inline namespace hprof {

// "java/util/HashMap$Node" -> "java.util.HashMap$Node", "[I" -> "int[]",
// "[[Ljava/lang/Object;" -> "java.lang.Object[][]"; hidden-class '+' suffixes keep their '/' form.
std::string java_class_name(std::string_view internal);

// True when internal (slash or dot form) names the class java_name gives in dot form.
bool same_class_name(std::string_view internal, std::string_view java_name);

}  // namespace hprof
}  // namespace heapd
