#pragma once
// Class histograms of a test JVM (jcmd GC.class_histogram) and of heapd's report on its dump, and
// what differs between them.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "support/jvm_process.h"

namespace heapd::test {

// Class name in source form ("java.lang.Object[]", "byte[]") -> (instances, bytes).
using histogram = std::map<std::string, std::pair<std::uint64_t, std::uint64_t>>;

// jcmd's rows, its internal names ("[Ljava.lang.Object;", "[B") put in source form.
histogram parse_jcmd_histogram(const std::string& text);

// `heapd analyze --json --top 0 FILE`, parsed (a failure is a test failure).
nlohmann::json analyze_json(const std::string& file);

// The histogram of heapd's JSON report.
histogram ours(const nlohmann::json& report);

// Dumps the JVM between two class histograms that agree (the JVM was idle in between), and returns
// that histogram; the first full GC may still let cleaners run, so it retries.
histogram stable_dump(const demo_jvm& jvm, const std::string& file, const std::vector<std::string>& dump_opts = {});

// One line per class whose counts or bytes differ, "" when none; classes in except are skipped.
std::string differences(const histogram& jcmd, const histogram& mine, const std::set<std::string>& except = {});

}  // namespace heapd::test
