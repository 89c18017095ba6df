// The direction of dependencies between components (cmake/heapd_component.cmake): every include
// of every source stays within what its component links, internal/ stays within its component,
// outside libraries are used only where linked; and the build itself refuses a forbidden include.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/jvm_process.h"

namespace fs = std::filesystem;
using heapd::test::run_command;
using heapd::test::scratch_dir;

namespace {

// What one component may include: its folder, the folders it links, and outside libraries
// ("lib:<CMake target>").
struct component {
    std::string dir;
    std::set<std::string> allowed;
};

std::vector<component> read_layering() {
    std::vector<component> all;
    std::ifstream in(HEAPD_LAYERING_FILE);
    std::string line;
    while (std::getline(in, line)) {
        const auto colon = line.find(": ");
        if (colon == std::string::npos) continue;
        component c{line.substr(0, colon), {}};
        std::istringstream words(line.substr(colon + 2));
        for (std::string w; words >> w;) c.allowed.insert(w);
        all.push_back(std::move(c));
    }
    // Longest folder first: daemon/server/handlers/x.h belongs to daemon/server, never to daemon.
    std::sort(all.begin(), all.end(),
              [](const component& a, const component& b) { return a.dir.size() > b.dir.size(); });
    return all;
}

const component* owner_of(const std::vector<component>& all, const std::string& path) {
    for (const component& c : all)
        if (path.starts_with(c.dir + "/")) return &c;
    return nullptr;
}

// The outside library a system include belongs to ("" for the standard library and libc).
std::string library_of(const std::string& header) {
    static const std::vector<std::pair<std::string, std::vector<std::string>>> prefixes = {
        {"boost/", {"lib:heapd_asio"}},
        {"spdlog/", {"lib:spdlog::spdlog"}},
        {"fmt/", {"lib:spdlog::spdlog"}},
        {"nlohmann/", {"lib:nlohmann_json::nlohmann_json"}},
        {"zlib.h", {"lib:ZLIB::ZLIB"}},
        {"systemd/", {"lib:PkgConfig::LIBSYSTEMD"}},
        {"libunwind-ptrace.h", {"lib:PkgConfig::LIBUNWIND_PTRACE"}},
        {"libunwind", {"lib:PkgConfig::LIBUNWIND"}},
        {"CLI/", {"lib:CLI11::CLI11"}},
        {"toml++/", {"lib:heapd_tomlplusplus"}},
        {"gtest/", {"lib:GTest::gtest"}},
    };
    for (const auto& [prefix, libs] : prefixes)
        if (header.starts_with(prefix)) return libs.front();
    return {};
}

// Every violation in the sources under the component folders, one line each.
std::vector<std::string> violations(const std::vector<component>& all) {
    std::vector<std::string> found;
    const fs::path root = HEAPD_SOURCE_DIR;
    const std::regex include(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])");
    for (const char* top : {"base", "attach", "formats", "daemon", "cli"}) {
        for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
            const std::string ext = entry.path().extension();
            if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp" && ext != ".inl")) continue;
            const std::string rel = fs::relative(entry.path(), root).string();
            const component* from = owner_of(all, rel);
            if (!from) {
                found.push_back(rel + ": in no component (cmake/heapd_component.cmake)");
                continue;
            }
            std::ifstream in(entry.path());
            std::string line;
            for (int number = 1; std::getline(in, line); ++number) {
                std::smatch m;
                if (!std::regex_search(line, m, include)) continue;
                const std::string where = rel + ":" + std::to_string(number) + ": ";
                const std::string header = m[2];
                if (m[1] == "<") {
                    const std::string lib = library_of(header);
                    if (!lib.empty() && !from->allowed.contains(lib))
                        found.push_back(where + "<" + header + "> of " + lib.substr(4) + ", which " + from->dir +
                                        " does not link");
                    continue;
                }
                if (!fs::exists(root / header)) {
                    found.push_back(where + "\"" + header + "\" is not a path from the repository's root");
                    continue;
                }
                const component* to = owner_of(all, header);
                if (!to) {
                    found.push_back(where + "\"" + header + "\" is in no component");
                } else if (!from->allowed.contains(to->dir)) {
                    found.push_back(where + "\"" + header + "\": " + from->dir + " does not depend on " + to->dir);
                } else if (header.find("/internal/") != std::string::npos && to != from) {
                    found.push_back(where + "\"" + header + "\" is internal to " + to->dir);
                }
            }
        }
    }
    return found;
}

std::string joined(const std::vector<std::string>& lines) {
    std::string text;
    for (const std::string& l : lines) text += l + "\n";
    return text;
}

// Compiles a file that includes header, with the include directories the build gives a target
// (colon-separated): the compiler's result.
heapd::test::command_result compile_include(const std::string& header, const std::string& includes) {
    scratch_dir dir;
    std::ofstream(dir.file("probe.cpp")) << "#include \"" << header << "\"\n";
    std::vector<std::string> argv = {HEAPD_CXX, "-std=c++23", "-fsyntax-only"};
    std::istringstream dirs(includes);
    for (std::string d; std::getline(dirs, d, ':');)
        if (!d.empty()) argv.push_back("-I" + d);
    argv.push_back(dir.file("probe.cpp"));
    return run_command(argv);
}

}  // namespace

TEST(layering, every_component_is_declared) {
    const auto all = read_layering();
    std::set<std::string> dirs;
    for (const component& c : all) dirs.insert(c.dir);
    for (const char* expected : {"base", "attach", "formats/hprof", "formats/hsperf", "formats/analysis",
                                 "formats/report", "formats/protocol", "daemon/server", "daemon/commands", "cli"})
        EXPECT_TRUE(dirs.contains(expected)) << expected;
}

TEST(layering, every_include_follows_the_direction_of_dependencies) {
    const auto found = violations(read_layering());
    EXPECT_TRUE(found.empty()) << found.size() << " forbidden includes:\n" << joined(found);
}

// The test above finds a forbidden include: one added to a low component's layering makes it fail.
TEST(layering, a_forbidden_include_is_found) {
    auto all = read_layering();
    // formats/hprof as if it could see nothing but itself: its includes of base/ are now forbidden.
    for (component& c : all)
        if (c.dir == "formats/hprof") c.allowed = {"formats/hprof"};
    const auto found = violations(all);
    ASSERT_FALSE(found.empty());
    EXPECT_NE(joined(found).find("formats/hprof does not depend on base"), std::string::npos) << joined(found);
}

// The build enforces the same: a target sees the folders of what it links and nothing else.
TEST(layering, a_forbidden_include_does_not_compile) {
    auto allowed = compile_include("formats/hprof/hprof_reader.h", HEAPD_HPROF_INCLUDES);
    EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
    for (const char* higher : {"daemon/store/store.h", "formats/analysis/census.h", "attach/attach_client.h"}) {
        auto refused = compile_include(higher, HEAPD_HPROF_INCLUDES);
        EXPECT_NE(refused.exit_code, 0) << higher;
        EXPECT_NE(refused.err.find(std::string(higher) + ": No such file"), std::string::npos) << refused.err;
    }
    // heapctl: the protocol and the report model, never the reader or the daemon.
    EXPECT_EQ(compile_include("formats/protocol/protocol.h", HEAPD_HEAPCTL_INCLUDES).exit_code, 0);
    for (const char* other : {"formats/hprof/hprof_reader.h", "daemon/server/server.h", "attach/attach_client.h"}) {
        auto refused = compile_include(other, HEAPD_HEAPCTL_INCLUDES);
        EXPECT_NE(refused.exit_code, 0) << other;
    }
}
