// The direction of dependencies between components (cmake/heapd_component.cmake): every include
// of every source stays within what its component links, internal/ stays within its component,
// outside libraries are used only where linked, the architecture page draws what the build links;
// and the build itself refuses a forbidden include.
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
    // Every top folder that holds a component: a file in such a folder but in no component is found.
    std::set<std::string> tops;
    for (const component& c : all) tops.insert(c.dir.substr(0, c.dir.find('/')));
    for (const std::string& top : tops) {
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

// The namespace a component's files open (docs/architecture.md, Namespaces): heapd for base/,
// heapd::daemon for every folder of daemon/, heapd::NAME for the rest after their last folder, the
// formats' model and the analysis engine declared inline.
std::string namespace_of(const std::string& dir) {
    if (dir == "base") return "heapd";
    if (dir.starts_with("daemon/")) return "heapd::daemon";
    const std::string name = dir.substr(dir.rfind('/') + 1);
    for (const char* shared : {"hprof", "hsperf", "memory", "report", "analysis"})
        if (name == shared) return "heapd::inline " + name;
    return "heapd::" + name;
}

// Every namespace a file of the component dir opens that is not its folder's (or one inside it),
// one line each. `namespace heapd {` followed by `inline namespace X {` opens heapd::inline X
// (written so because clang-format 14 cannot keep the closing comment of `heapd::inline X`).
std::vector<std::string> namespace_violations(const std::string& path, const std::string& dir, std::istream& text) {
    std::vector<std::string> lines;
    for (std::string line; std::getline(text, line);) lines.push_back(line);
    std::vector<std::string> found;
    const std::string expected = namespace_of(dir);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (!lines[i].starts_with("namespace heapd")) continue;
        std::string opened = lines[i].substr(10, lines[i].find(" {") - 10);
        if (opened == "heapd" && i + 1 < lines.size() && lines[i + 1].starts_with("inline namespace "))
            opened += "::inline " + lines[i + 1].substr(17, lines[i + 1].find(" {") - 17);
        if (opened != expected && !opened.starts_with(expected + "::"))
            found.push_back(path + ":" + std::to_string(i + 1) + ": namespace " + opened + ", not " + expected);
    }
    return found;
}

// The namespace violations of every source file of every component.
std::vector<std::string> namespace_violations(const std::vector<component>& all) {
    std::vector<std::string> found;
    const fs::path root = HEAPD_SOURCE_DIR;
    for (const component& c : all) {
        for (const auto& entry : fs::recursive_directory_iterator(root / c.dir)) {
            const std::string ext = entry.path().extension();
            if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp" && ext != ".inl")) continue;
            const std::string rel = fs::relative(entry.path(), root).string();
            if (owner_of(all, rel) != &c) continue;  // a component of its own below this one
            std::ifstream in(entry.path());
            for (std::string& v : namespace_violations(rel, c.dir, in)) found.push_back(std::move(v));
        }
    }
    return found;
}

// What one component links directly (components.txt): component folders and outside libraries.
std::map<std::string, std::set<std::string>> read_components() {
    std::map<std::string, std::set<std::string>> all;
    std::ifstream in(HEAPD_COMPONENTS_FILE);
    std::string line;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        auto& deps = all[line.substr(0, colon)];
        std::istringstream words(line.substr(colon + 1));
        for (std::string w; words >> w;) deps.insert(w);
    }
    return all;
}

// The name docs/architecture.md gives an outside library (CMake's name otherwise).
std::string doc_name(const std::string& lib) {
    static const std::map<std::string, std::string> names = {
        {"lib:nlohmann_json::nlohmann_json", "nlohmann-json"},
        {"lib:ZLIB::ZLIB", "zlib"},
        {"lib:Threads::Threads", "threads"},
        {"lib:heapd_asio", "Asio"},
        {"lib:spdlog::spdlog", "spdlog"},
        {"lib:PkgConfig::LIBSYSTEMD", "libsystemd"},
        {"lib:PkgConfig::LIBUNWIND", "libunwind"},
        {"lib:PkgConfig::LIBUNWIND_PTRACE", "libunwind-ptrace"},
        {"lib:CURL::libcurl", "libcurl"},
        {"lib:heapd_tomlplusplus", "toml++"},
        {"lib:CLI11::CLI11", "CLI11"},
    };
    const auto it = names.find(lib);
    return it == names.end() ? lib : it->second;
}

// The architecture page's section on components: its picture (one line of folders per level, top
// first) and its table (folder -> what it may use, as component folders and outside libraries).
struct architecture_page {
    std::vector<std::vector<std::string>> picture;
    std::map<std::string, std::set<std::string>> table;
};

std::string trimmed(const std::string& s) {
    const auto a = s.find_first_not_of(' ');
    const auto b = s.find_last_not_of(' ');
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

architecture_page read_architecture_page(const std::string& text) {
    architecture_page page;
    const auto section = text.find("## Components and the direction of dependencies");
    const auto next = text.find("\n## ", section + 1);
    std::istringstream in(text.substr(section, next - section));
    bool in_picture = false, picture_done = false;
    const std::regex quoted("`([^`]+)`");
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with("```")) {
            picture_done = in_picture;
            in_picture = !in_picture && !picture_done;
            continue;
        }
        if (in_picture) {
            std::istringstream words(line);
            std::vector<std::string> level;
            for (std::string w; words >> w;) level.push_back(w);
            page.picture.push_back(level);
            continue;
        }
        if (!line.starts_with("| `")) continue;
        // | `folder/` | what | `dep`, `dep` (why); lib, lib |
        const auto last_bar = line.rfind(" |");
        const auto uses_bar = line.rfind(" | ", last_bar - 1);
        std::string folder = line.substr(3, line.find('`', 3) - 3);
        if (folder.ends_with('/')) folder.pop_back();
        const std::string uses = line.substr(uses_bar + 3, last_bar - uses_bar - 3);
        const auto semicolon = uses.find(';');
        auto& deps = page.table[folder];
        const std::string components = uses.substr(0, semicolon);
        for (auto it = std::sregex_iterator(components.begin(), components.end(), quoted); it != std::sregex_iterator();
             ++it)
            deps.insert((*it)[1]);
        if (semicolon == std::string::npos) continue;
        std::istringstream libs(uses.substr(semicolon + 1));
        for (std::string lib; std::getline(libs, lib, ',');)
            if (const std::string name = trimmed(lib); name != "std" && name != "libc" && name != "jvmti.h")
                deps.insert(name);
    }
    return page;
}

// Where the page and the build disagree, one line each.
std::vector<std::string> page_differences(const architecture_page& page,
                                          const std::map<std::string, std::set<std::string>>& built) {
    std::vector<std::string> found;
    std::map<std::string, std::size_t> level_of;
    for (std::size_t i = 0; i < page.picture.size(); ++i)
        for (const std::string& dir : page.picture[i]) level_of[dir] = i;
    for (const auto& [dir, links] : built) {
        std::set<std::string> expected;
        for (const std::string& d : links) expected.insert(d.starts_with("lib:") ? doc_name(d) : d);
        const auto row = page.table.find(dir);
        if (row == page.table.end()) {
            found.push_back(dir + ": no row in the table");
        } else {
            for (const std::string& d : expected)
                if (!row->second.contains(d)) found.push_back(dir + ": uses " + d + ", which the table does not say");
            for (const std::string& d : row->second)
                if (!expected.contains(d))
                    found.push_back(dir + ": the table says it uses " + d + ", which it does not link");
        }
        const auto level = level_of.find(dir);
        if (level == level_of.end()) {
            found.push_back(dir + ": not in the picture");
            continue;
        }
        for (const std::string& d : links)
            if (!d.starts_with("lib:") && level_of.contains(d) && level_of.at(d) <= level->second)
                found.push_back(dir + ": uses " + d + ", which the picture does not draw below it");
    }
    for (const auto& [dir, uses] : page.table)
        if (!built.contains(dir)) found.push_back(dir + ": a row in the table, but no component");
    for (const auto& [dir, level] : level_of)
        if (!built.contains(dir)) found.push_back(dir + ": in the picture, but no component");
    return found;
}

std::string read_text(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
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
    for (const char* expected : {"base", "attach", "formats/hprof", "formats/hsperf", "analysis", "formats/report",
                                 "formats/wire", "daemon/server", "daemon/commands", "cli"})
        EXPECT_TRUE(dirs.contains(expected)) << expected;
}

TEST(layering, every_file_opens_the_namespace_of_its_folder) {
    const auto found = namespace_violations(read_layering());
    EXPECT_TRUE(found.empty()) << found.size() << " files in another namespace:\n" << joined(found);
}

// The test above finds a file in another folder's namespace.
TEST(layering, a_file_in_another_namespace_is_found) {
    std::istringstream stacks("namespace heapd::stacks {\n}  // namespace heapd::stacks\n");
    EXPECT_EQ(namespace_violations("daemon/stacks/x.h", "daemon/stacks", stacks).size(), 1u);
    std::istringstream plain("namespace heapd {\nnamespace {\n}\n}  // namespace heapd\n");
    EXPECT_EQ(namespace_violations("formats/hprof/x.h", "formats/hprof", plain).size(), 1u);
    std::istringstream other("namespace heapd {\ninline namespace report {\n}\n}\n");
    EXPECT_EQ(namespace_violations("formats/hprof/x.h", "formats/hprof", other).size(), 1u);
    std::istringstream right("namespace heapd {\ninline namespace hprof {\nnamespace be {\n}\n}\n}\n");
    EXPECT_TRUE(namespace_violations("formats/hprof/x.h", "formats/hprof", right).empty());
    std::istringstream prefix("namespace heapd::attachment {\n}\n");
    EXPECT_EQ(namespace_violations("attach/x.h", "attach", prefix).size(), 1u);
    std::istringstream daemon("namespace heapd::daemon {\n}\n");
    EXPECT_TRUE(namespace_violations("daemon/commands/x.h", "daemon/commands", daemon).empty());
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

// docs/architecture.md's picture and table say what the build links: they cannot drift from it.
TEST(layering, the_architecture_page_says_what_the_build_links) {
    const auto built = read_components();
    ASSERT_GT(built.size(), 10u) << HEAPD_COMPONENTS_FILE;
    const auto page = read_architecture_page(read_text(fs::path(HEAPD_SOURCE_DIR) / "docs/architecture.md"));
    const auto found = page_differences(page, built);
    EXPECT_TRUE(found.empty()) << joined(found);
}

// The comparison above finds a difference: a dependency the page leaves out, one it adds, one drawn
// upwards, and a component it does not know.
TEST(layering, a_page_that_differs_from_the_build_is_found) {
    const auto built = read_components();
    const auto page = read_architecture_page(read_text(fs::path(HEAPD_SOURCE_DIR) / "docs/architecture.md"));
    auto changed = page;
    changed.table["daemon/jobs"].erase("analysis");
    changed.table["formats/hprof"].insert("attach");
    std::swap(changed.picture.front(), changed.picture.back());
    changed.table.erase("daemon/oom");
    const std::string found = joined(page_differences(changed, built));
    EXPECT_NE(found.find("daemon/jobs: uses analysis, which the table does not say"), std::string::npos) << found;
    EXPECT_NE(found.find("formats/hprof: the table says it uses attach"), std::string::npos) << found;
    EXPECT_NE(found.find("which the picture does not draw below it"), std::string::npos) << found;
    EXPECT_NE(found.find("daemon/oom: no row in the table"), std::string::npos) << found;
}

// The build enforces the same: a target sees the folders of what it links and nothing else.
TEST(layering, a_forbidden_include_does_not_compile) {
    auto allowed = compile_include("formats/hprof/hprof_reader.h", HEAPD_HPROF_INCLUDES);
    EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
    for (const char* higher : {"daemon/store/store.h", "analysis/census.h", "attach/attach_client.h"}) {
        auto refused = compile_include(higher, HEAPD_HPROF_INCLUDES);
        EXPECT_NE(refused.exit_code, 0) << higher;
        EXPECT_NE(refused.err.find(std::string(higher) + ": No such file"), std::string::npos) << refused.err;
    }
    // heapctl: the protocol and the report model, never the reader or the daemon.
    EXPECT_EQ(compile_include("formats/wire/protocol.h", HEAPD_HEAPCTL_INCLUDES).exit_code, 0);
    for (const char* other : {"formats/hprof/hprof_reader.h", "daemon/server/server.h", "attach/attach_client.h"}) {
        auto refused = compile_include(other, HEAPD_HEAPCTL_INCLUDES);
        EXPECT_NE(refused.exit_code, 0) << other;
    }
}
