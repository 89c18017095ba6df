#include "formats/hprof/java_names.h"

#include <cstdio>

#include "formats/hprof/basic_type.h"

namespace heapd {
inline namespace hprof {
namespace {

std::string_view descriptor_primitive(char c) {
    switch (c) {
    case 'Z': return "boolean";
    case 'C': return "char";
    case 'F': return "float";
    case 'D': return "double";
    case 'B': return "byte";
    case 'S': return "short";
    case 'I': return "int";
    case 'J': return "long";
    default: return "";
    }
}

std::string dotted(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c == '/') c = '.';
    // Hidden classes are written "Name+0x..." internally and "Name/0x..." by the JVM.
    if (auto plus = out.rfind('+'); plus != std::string::npos && out.compare(plus + 1, 2, "0x") == 0) out[plus] = '/';
    return out;
}

}  // namespace

std::string java_class_name(std::string_view internal) {
    std::size_t dims = 0;
    while (dims < internal.size() && internal[dims] == '[') ++dims;
    if (dims == 0) return dotted(internal);
    std::string_view elem = internal.substr(dims);
    std::string base;
    if (elem.size() == 1 && !descriptor_primitive(elem[0]).empty()) {
        base = descriptor_primitive(elem[0]);
    } else if (elem.size() >= 2 && elem.front() == 'L' && elem.back() == ';') {
        base = dotted(elem.substr(1, elem.size() - 2));
    } else {
        base = dotted(elem);
    }
    for (std::size_t i = 0; i < dims; ++i) base += "[]";
    return base;
}

bool same_class_name(std::string_view internal, std::string_view java_name) {
    if (internal.size() != java_name.size()) return false;
    for (std::size_t i = 0; i < internal.size(); ++i) {
        char a = internal[i] == '/' ? '.' : internal[i];
        if (a != java_name[i]) return false;
    }
    return true;
}

}  // namespace hprof
}  // namespace heapd
