#include "support/jcmd_histogram.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <sstream>

namespace heapd::test {
namespace {

// "[Ljava.lang.Object;" -> "java.lang.Object[]", "[B" -> "byte[]".
std::string source_name(std::string n) {
    static const std::map<char, std::string> prim = {{'Z', "boolean"}, {'C', "char"},  {'F', "float"}, {'D', "double"},
                                                     {'B', "byte"},    {'S', "short"}, {'I', "int"},   {'J', "long"}};
    std::size_t dims = 0;
    while (dims < n.size() && n[dims] == '[') ++dims;
    if (dims == 0) return n;
    std::string elem = n.substr(dims);
    std::string base = elem.size() == 1 ? prim.at(elem[0]) : elem.substr(1, elem.size() - 2);
    for (std::size_t i = 0; i < dims; ++i) base += "[]";
    return base;
}

}  // namespace

histogram parse_jcmd_histogram(const std::string& text) {
    histogram h;
    static const std::regex row(R"(^\s*\d+:\s+(\d+)\s+(\d+)\s+(\S+))");
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (!std::regex_search(line, m, row)) continue;
        auto& e = h[source_name(m[3])];
        e.first += std::stoull(m[1]);
        e.second += std::stoull(m[2]);
    }
    return h;
}

nlohmann::json analyze_json(const std::string& file) {
    auto r = run_command({heapd_binary(), "analyze", "--json", "--top", "0", file});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
}

histogram ours(const nlohmann::json& report) {
    histogram h;
    for (const auto& e : report.at("histogram")) {
        auto& row = h[e.at("class").get<std::string>()];
        row.first += e.at("instances").get<std::uint64_t>();
        row.second += e.at("shallow_bytes").get<std::uint64_t>();
    }
    return h;
}

histogram stable_dump(const demo_jvm& jvm, const std::string& file, const std::vector<std::string>& dump_opts) {
    for (int attempt = 0; attempt < 6; ++attempt) {
        histogram before = parse_jcmd_histogram(jvm.jcmd({"GC.class_histogram"}).out);
        std::filesystem::remove(file);
        std::vector<std::string> args = {"GC.heap_dump"};
        args.insert(args.end(), dump_opts.begin(), dump_opts.end());
        args.push_back(file);
        auto d = jvm.jcmd(args);
        EXPECT_EQ(d.exit_code, 0) << d.out << d.err;
        histogram after = parse_jcmd_histogram(jvm.jcmd({"GC.class_histogram"}).out);
        if (before == after && !after.empty()) return after;
        ::usleep(300000);
    }
    ADD_FAILURE() << "the JVM did not hold still across a dump";
    return {};
}

std::string differences(const histogram& jcmd, const histogram& mine, const std::set<std::string>& except) {
    std::string out;
    std::set<std::string> keys;
    for (const auto& [k, v] : jcmd) keys.insert(k);
    for (const auto& [k, v] : mine) keys.insert(k);
    for (const auto& k : keys) {
        if (except.count(k) != 0) continue;
        auto a = jcmd.count(k) ? jcmd.at(k) : std::pair<std::uint64_t, std::uint64_t>{};
        auto b = mine.count(k) ? mine.at(k) : std::pair<std::uint64_t, std::uint64_t>{};
        if (a != b)
            out += k + ": jcmd " + std::to_string(a.first) + "/" + std::to_string(a.second) + " B, heapd " +
                   std::to_string(b.first) + "/" + std::to_string(b.second) + " B\n";
    }
    return out;
}

}  // namespace heapd::test
