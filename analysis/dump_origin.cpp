#include "analysis/dump_origin.h"

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "formats/hprof/java_strings.h"
#include "formats/hprof/object_locator.h"

namespace heapd {
inline namespace analysis {
namespace {

// Where JVMs keep their version, newest first: JDK 9 and later, then JDK 8 and older.
constexpr std::array<std::string_view, 2> version_classes = {"java.lang.VersionProps", "sun.misc.Version"};

// The writer, from what only one writer puts in a dump.
void tell_writer(const record_index& idx, const census_result& census, dump_origin& o) {
    if (census.subrecord_counts[0xFE] != 0) {
        o.writer = "Android runtime";
        o.writer_sign = "HEAP DUMP INFO records";
    } else if (idx.count(record_tag::control_settings) != 0 || idx.count(record_tag::start_thread) != 0) {
        o.writer = "hprof agent";
        o.writer_sign = "CONTROL SETTINGS and START THREAD records";
    } else if (census.roots[static_cast<unsigned>(root_kind::sticky_class)] == 0 && census.classes != 0 &&
               census.roots[static_cast<unsigned>(root_kind::thread_object)] != 0) {
        o.writer = "serviceability agent";
        o.writer_sign = "thread roots but no sticky class roots (jhsdb jmap --binaryheap)";
    } else if (idx.count(record_tag::heap_dump_segment) != 0 ||
               census.roots[static_cast<unsigned>(root_kind::thread_object)] != 0) {
        o.writer = "HotSpot heap dumper";
        o.writer_sign = "thread object roots, no agent records";
    } else {
        o.writer = "unknown";
    }
}

// The object id a static reference field of the class holds, 0 when absent or null.
std::uint64_t static_reference(const record_index& idx, const class_info& c, std::string_view field) {
    std::uint64_t id = 0;
    c.dump.for_each_static([&](const class_dump_view::static_field& s) {
        if (s.type == 2 && id == 0 && idx.utf8(s.name_id) == field) id = be::id(s.value.data(), idx.id_size());
    });
    return id;
}

// Android keeps its API level as an int: no String to read.
bool android_version(const record_index& idx, const class_table& classes, dump_origin& o) {
    const class_info* c = classes.find_by_name("android.os.Build$VERSION");
    if (c == nullptr) return false;
    c->dump.for_each_static([&](const class_dump_view::static_field& s) {
        if (s.type == 10 && idx.utf8(s.name_id) == "SDK_INT")
            o.java_version = "Android API " + std::to_string(be::u4(s.value.data()));
    });
    if (o.java_version.empty()) return false;
    o.version_source = "android.os.Build$VERSION.SDK_INT";
    return true;
}

}  // namespace

version_strings find_version_strings(const record_index& idx, const class_table& classes, const census_result& census) {
    version_strings v;
    if (census.stripped.strings) return v;  // zeros: only the shape of String tells the version
    for (std::string_view name : version_classes)
        if (const class_info* c = classes.find_by_name(name)) {
            v.source = std::string(name);
            for (std::string_view field : {"java_runtime_version", "java_version", "java_runtime_name"})
                v.ids.push_back(static_reference(idx, *c, field));
            return v;
        }
    return v;
}

std::vector<std::string> read_strings(const record_index& idx, const class_table& classes,
                                      const std::vector<std::uint64_t>& ids, const record_finder& finder) {
    std::vector<std::string> out(ids.size());
    object_locator strings(idx, ids, finder);
    std::vector<string_fields> fields(ids.size());
    std::vector<std::uint64_t> values;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const located_object* o = strings.find(ids[i]);
        if (o == nullptr || o->tag != 0x21) continue;
        if (auto f = read_string_fields(classes, o->instance)) {
            fields[i] = *f;
            values.push_back(f->value_id);
        }
    }
    object_locator arrays(idx, values, finder);
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const located_object* o = fields[i].value_id ? arrays.find(fields[i].value_id) : nullptr;
        if (o == nullptr || o->tag != 0x23) continue;
        if (auto chars = string_chars(o->primitive_array, fields[i]))
            out[i] = decode_java_string(*chars, fields[i].coder, 200);
    }
    return out;
}

dump_origin find_dump_origin(const record_index& idx, const class_table& classes, const census_result& census,
                             const version_strings& v, const std::vector<std::string>& text) {
    dump_origin o;
    tell_writer(idx, census, o);
    if (android_version(idx, classes, o)) return o;
    if (v.ids.size() == 3 && text.size() == 3) {
        o.java_version = !text[0].empty() ? text[0] : text[1];
        if (!o.java_version.empty()) {
            o.java_runtime = text[2];
            o.version_source = v.source;
            return o;
        }
    }
    o.java_version = std::string(guess_java_release(classes).releases);
    if (!o.java_version.empty()) o.version_source = "the fields of java.lang.String";
    return o;
}

}  // namespace analysis
}  // namespace heapd
