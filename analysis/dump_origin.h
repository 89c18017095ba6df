#pragma once
// Which program and which Java wrote a dump, read from the dump itself: the writer from the kinds
// of records it holds, the Java version from the version class every JVM keeps in its heap.
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/census.h"
#include "formats/hprof/class_table.h"
#include "formats/hprof/object_locator.h"
#include "formats/hprof/record_index.h"

namespace heapd {
inline namespace analysis {

// Who wrote a dump and for which Java, and how each was told.
struct dump_origin {
    std::string writer;          // "HotSpot heap dumper", "serviceability agent", "hprof agent", "Android runtime"
    std::string writer_sign;     // what told it: "HEAP DUMP INFO records", ...
    std::string java_version;    // "17.0.15+6-Debian-1deb12u1", "1.8.0_181-8u181-b13-2-b13"; "" when unknown
    std::string java_runtime;    // "OpenJDK Runtime Environment", "" when unknown
    std::string version_source;  // "java.lang.VersionProps", or the shape of java.lang.String when no version is kept
};

// The Strings that hold a dump's Java version: the statics java_runtime_version, java_version and
// java_runtime_name of the version class the dump has (ids 0 for those it lacks; none at all in a
// dump whose strings are stripped). Reads class dumps only.
struct version_strings {
    std::string source;              // the class: "java.lang.VersionProps", "sun.misc.Version"
    std::vector<std::uint64_t> ids;  // empty when there is none
};
version_strings find_version_strings(const record_index& idx, const class_table& classes, const census_result& census);

// The contents of Strings by id ("" for those not found), with two walks of their own that keep only
// those objects (none with a finder): for when no walk for thread names reads them (threads.h
// strings_along).
std::vector<std::string> read_strings(const record_index& idx, const class_table& classes,
                                      const std::vector<std::uint64_t>& ids, const record_finder& finder = {});

// The writer, told from the records and the census, and the version, from the contents of the
// version Strings (text, in the order of v.ids) or else from the shape of java.lang.String.
dump_origin find_dump_origin(const record_index& idx, const class_table& classes, const census_result& census,
                             const version_strings& v, const std::vector<std::string>& text);

}  // namespace analysis
}  // namespace heapd
