// The HTML report in a real headless Chromium: the OOM demo's page names the leaking map first with
// its path and allocation site, its dominator tree draws one slice per node shown and zooms into the
// suspect's subtree; a JVM dumped twice gets its history and growth drawn, as does a diff; names and
// strings from a dump that are markup stay text. No page logs anything or asks for anything but itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "support/headless_browser.h"
#include "support/hprof_builder.h"
#include "support/jvm_process.h"
#include "support/oom_scenario.h"
#include "support/serve_process.h"

namespace heapd::test {
namespace {

using json = nlohmann::json;

std::string url_of(const std::string& path) { return "file://" + path; }

// Starts a browser or skips the test where there is none.
#define START_BROWSER(var, dir, ...)                                                                \
    if (!headless_browser::chromium_installed()) GTEST_SKIP() << "needs chromium (Debian package)"; \
    std::string why_##var;                                                                          \
    auto var = headless_browser::start(dir, ##__VA_ARGS__, &why_##var);                             \
    ASSERT_TRUE(var.has_value()) << why_##var

// Nothing logged, thrown or refused, and no request but the page itself.
void expect_quiet(const headless_browser& b, const std::string& url) {
    for (const page_event& e : b.console())
        ADD_FAILURE() << e.kind << " " << e.level << " " << e.source << ": " << e.text;
    ASSERT_FALSE(b.requests().empty());
    EXPECT_EQ(b.requests().front(), url);
    for (std::size_t i = 1; i < b.requests().size(); ++i) ADD_FAILURE() << "request " << b.requests()[i];
}

// Keeps a screenshot (NAME.png) and the page (NAME.html) where HEAPD_TEST_SCREENSHOTS points, for
// people to look at.
void keep_screenshot(headless_browser& b, const std::string& name, const std::string& page) {
    const char* dir = std::getenv("HEAPD_TEST_SCREENSHOTS");
    if (dir == nullptr || *dir == '\0') return;
    EXPECT_TRUE(b.screenshot(std::string(dir) + "/" + name + ".png")) << b.error();
    std::filesystem::copy_file(page, std::string(dir) + "/" + name + ".html",
                               std::filesystem::copy_options::overwrite_existing);
}

// What the picture shows at its current focus, computed by the test from the page's data and DOM:
// slices drawn, distinct nodes among them, slices outside the focus's six rings, and nodes of at
// least 1% of the focus (3.6 degrees: they must be drawn) that are not.
const char* const tree_facts = R"js((() => {
  const data = JSON.parse(document.getElementById('heapd-data').textContent);
  const nodes = data.tree.nodes, focus = window.heapdFocus();
  const depth = i => { let d = 0; for (let k = i; k !== focus; k = nodes[k].parent) { if (k < 0) return -1; d++; } return d; };
  const drawn = [...document.querySelectorAll('#tree-view path.node:not(.centre)')].map(p => Number(p.dataset.index));
  const whole = focus < 0 ? data.tree.total : nodes[focus].retained;
  const must = nodes.map((n, i) => i).filter(i => { const d = depth(i); return d >= 1 && d <= 6 && nodes[i].retained * 100 >= whole; });
  return {focus, drawn: drawn.length, distinct: new Set(drawn).size,
          outside: drawn.filter(i => { const d = depth(i); return d < 1 || d > 6; }).length,
          missing: must.filter(i => !drawn.includes(i)).length, must: must.length,
          crumbs: document.getElementById('tree-crumbs').textContent};
})())js";

json click(headless_browser& b, const std::string& selector) {
    return b.evaluate(
        "(() => { const e = document.querySelector('" + selector +
        "'); if (!e) return false; e.dispatchEvent(new MouseEvent('click', {bubbles: true})); return true; })()");
}

TEST(html_report, the_oom_page_names_the_leaking_map_first_and_zooms_into_it) {
    serve_process d({"--spool", ""});
    ASSERT_TRUE(d.ready()) << d.log();
    scratch_dir dir;
    const std::string agent = std::string(HEAPD_BINARY_DIR) + "/daemon/libheapd_agent.so";
    demo_jvm jvm(java_main{"OomExit"},
                 {"-Xmx64m", hook_flag(d, dir.path(), dir.file("unused-spool")), "-agentpath:" + agent + "=start"},
                 {dir.file("go")}, dir.file("jvm.out"));
    ASSERT_TRUE(jvm.ready());
    // The daemon arms the JVM (its dump path) before it may leak.
    ASSERT_EQ(armed_row(d, jvm.pid()).value("oom_arming", nlohmann::json::object()).value("state", ""), "armed")
        << d.log();
    std::ofstream(dir.file("go")) << "go\n";
    ASSERT_TRUE(ended(jvm.pid()));
    ASSERT_EQ(finished_dump_job(d, jvm.pid()).value("state", ""), "done") << d.log();
    const std::string page = dir.file("oom.html");
    auto r = run_heapctl(d, {"report", std::to_string(jvm.pid()), "--html", page});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("HTML report written to " + page), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("Leak suspects"), std::string::npos);  // the text report as ever
    EXPECT_LT(std::filesystem::file_size(page), 5u << 20);

    START_BROWSER(b, dir.path());
    ASSERT_TRUE(b->open(url_of(page))) << b->error();
    // The first suspect: the map, its path from the class's static field, the line that filled it.
    const json first = b->evaluate(R"js((() => {
      const a = document.querySelector('#suspects article');
      return {text: a.querySelector('p').textContent,
              path: [...a.querySelectorAll('ol.path li')].map(l => l.textContent),
              sites: a.querySelector('ul.sites') ? a.querySelector('ul.sites').textContent : '',
              verdict: document.querySelector('.verdict').textContent};
    })())js");
    EXPECT_TRUE(first["text"].get<std::string>().starts_with("One instance of java.util.HashMap")) << first;
    EXPECT_NE(first["verdict"].get<std::string>().find("One java.util.HashMap retains"), std::string::npos) << first;
    const std::string path = first["path"].dump();
    EXPECT_NE(path.find("class OomExit (static CACHE)"), std::string::npos) << path;
    EXPECT_NE(path.find("java.util.HashMap.table"), std::string::npos) << path;
    EXPECT_NE(
        first["sites"].get<std::string>().find("java.util.HashMap$Node allocated at OomExit.main(OomExit.java:25)"),
        std::string::npos)
        << first;

    // The whole heap: one slice per node shown, every node of 1% or more among them.
    json facts = b->evaluate(tree_facts);
    EXPECT_EQ(facts["focus"], -1);
    EXPECT_GT(facts["drawn"].get<int>(), 2) << facts;
    EXPECT_EQ(facts["distinct"], facts["drawn"]) << facts;
    EXPECT_EQ(facts["outside"], 0) << facts;
    EXPECT_EQ(facts["missing"], 0) << facts;
    keep_screenshot(*b, "oom-report", page);

    // A click on the suspect's accumulation point (the map's table) zooms into its subtree.
    const int table = b->evaluate(R"js(JSON.parse(document.getElementById('heapd-data').textContent).tree.nodes
        .findIndex(n => n.suspect && n['class'] === 'java.util.HashMap$Node[]'))js")
                          .get<int>();
    ASSERT_GE(table, 0);
    ASSERT_EQ(click(*b, "#tree-view path.node[data-index=\"" + std::to_string(table) + "\"]"), true);
    facts = b->evaluate(tree_facts);
    EXPECT_EQ(facts["focus"], table) << facts;
    EXPECT_GE(facts["drawn"].get<int>(), 1) << facts;  // at least its others: 3,800 nodes of 16 KiB each
    EXPECT_EQ(facts["distinct"], facts["drawn"]) << facts;
    EXPECT_EQ(facts["outside"], 0) << facts;
    EXPECT_EQ(facts["missing"], 0) << facts;
    const std::string crumbs = facts["crumbs"];
    EXPECT_NE(crumbs.find("Heap"), std::string::npos) << crumbs;
    EXPECT_NE(crumbs.find("HashMap$Node[]"), std::string::npos) << crumbs;
    keep_screenshot(*b, "oom-report-zoomed", page);
    // And the breadcrumb leads back to the heap.
    ASSERT_EQ(click(*b, "#tree-crumbs button.crumb[data-index=\"-1\"]"), true);
    EXPECT_EQ(b->evaluate("window.heapdFocus()"), -1);
    expect_quiet(*b, url_of(page));

    // Without scripts: the verdict, the suspects and the tables are there, the picture is not.
    START_BROWSER(plain, dir.path(), false);
    ASSERT_TRUE(plain->open(url_of(page))) << plain->error();
    const json bare = plain->evaluate(R"js(({
      suspect: document.querySelector('#suspects article p').textContent,
      rows: document.querySelectorAll('#histogram-table tbody tr').length,
      slices: document.querySelectorAll('#tree-view path').length,
      note: getComputedStyle(document.querySelector('.noscript-note')).display}))js");
    EXPECT_TRUE(bare["suspect"].get<std::string>().starts_with("One instance of java.util.HashMap")) << bare;
    EXPECT_GT(bare["rows"].get<int>(), 5) << bare;
    EXPECT_EQ(bare["slices"], 0) << bare;
    EXPECT_NE(bare["note"], "none") << bare;
    expect_quiet(*plain, url_of(page));
}

TEST(html_report, a_jvm_dumped_twice_has_its_history_and_growth_drawn) {
    serve_process d;
    ASSERT_TRUE(d.ready()) << d.log();
    scratch_dir dir;
    demo_jvm jvm(java_main{"Leaky"}, {"-Xmx256m", "-Xshare:off"}, {dir.file("trigger"), "30000"});
    ASSERT_TRUE(jvm.ready());
    const std::string pid = std::to_string(jvm.pid());
    for (int i = 0; i < 2; ++i) {
        ASSERT_TRUE(leaky_grow(dir.file("trigger")));
        auto dumped = run_heapctl(d, {"dump", pid, "--wait", "--json"});
        ASSERT_EQ(dumped.exit_code, 0) << dumped.err << d.log();
    }
    const std::string report = dir.file("report.html"), diff = dir.file("diff.html");
    auto r = run_heapctl(d, {"report", pid, "--html", report});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto dr = run_heapctl(d, {"diff", pid, "--html", diff});
    ASSERT_EQ(dr.exit_code, 0) << dr.err;

    START_BROWSER(b, dir.path());
    ASSERT_TRUE(b->open(url_of(report))) << b->error();
    const json seen = b->evaluate(R"js((() => {
      const data = JSON.parse(document.getElementById('heapd-data').textContent);
      return {points: data.history.length, rows: document.querySelectorAll('#history-table tbody tr').length,
              dots: document.querySelectorAll('#history-chart circle').length,
              growth: data.growth.length, bars: document.querySelectorAll('#growth-chart .bar').length,
              first: document.querySelector('#growth-chart .bar-label').textContent};
    })())js");
    EXPECT_EQ(seen["points"], 2) << seen;
    EXPECT_EQ(seen["rows"], 2) << seen;
    EXPECT_GE(seen["dots"].get<int>(), 2) << seen;
    EXPECT_GE(seen["growth"].get<int>(), 1) << seen;
    EXPECT_EQ(seen["bars"], seen["growth"]) << seen;
    EXPECT_EQ(seen["first"], "Leaky") << seen;
    keep_screenshot(*b, "history-report", report);
    expect_quiet(*b, url_of(report));

    ASSERT_TRUE(b->open(url_of(diff))) << b->error();
    const json bars = b->evaluate(R"js(({
      growth: JSON.parse(document.getElementById('heapd-data').textContent).growth.length,
      bars: document.querySelectorAll('#growth-chart .bar').length,
      top: document.querySelector('#grew-table tbody td').textContent}))js");
    EXPECT_GE(bars["growth"].get<int>(), 1) << bars;
    EXPECT_EQ(bars["bars"], bars["growth"]) << bars;
    EXPECT_EQ(bars["top"], "Leaky") << bars;
    keep_screenshot(*b, "diff", diff);
    expect_quiet(*b, url_of(diff));
}

// Markup that would run (and load) if it were not text.
const std::string markup = "<script>window.pwned=1</script>\"'&amp;<img src=x onerror=window.pwned=2>";

// A dump whose class and field names are markup: an instance holding a 1 MiB array, `copies` times.
void write_crafted_dump(const std::string& path, unsigned copies) {
    constexpr std::uint64_t object_class = 0x100, evil_class = 0x101;
    hprof_builder b(8);
    b.utf8(0x901, "java/lang/Object").load_class(1, object_class, 0, 0x901);
    b.utf8(0x902, "evil<img src=x onerror=window.pwned=3>\"'").load_class(2, evil_class, 0, 0x902);
    b.utf8(0x801, "<svg onload=window.pwned=4>");
    b.begin_segment();
    b.class_dump(object_class, 0, {});
    b.class_dump(evil_class, object_class, {{0x801, 2}});
    for (unsigned i = 0; i < copies; ++i) {
        const std::uint64_t id = 0x10000 + i * 0x100, array = 0x100000 + std::uint64_t{i} * 0x200000;
        b.instance(id, evil_class, values(8).id(array).bytes());
        b.primitive_array(array, 8, 1u << 20);
        b.root_jni_global(id, 0);
    }
    b.end_segment();
    ASSERT_TRUE(b.write_to(path));
}

// True when nothing the dump held ran, and the page's own two scripts are its only ones.
void expect_inert(headless_browser& b) {
    EXPECT_EQ(b.evaluate("typeof window.pwned"), "undefined");
    EXPECT_EQ(b.evaluate("document.scripts.length"), 2);
    EXPECT_EQ(b.evaluate("document.querySelectorAll('img, iframe, object, embed').length"), 0);
}

TEST(html_report, names_and_strings_of_a_crafted_dump_stay_text) {
    scratch_dir dir;
    // Strings and a thread name from a real JVM.
    {
        demo_jvm jvm(java_main{"Hostile"}, {"-Xmx128m"}, {markup});
        ASSERT_TRUE(jvm.ready());
        ASSERT_EQ(jvm.jcmd({"GC.heap_dump", dir.file("hostile.hprof")}).exit_code, 0);
    }
    auto analyzed = run_command(
        {heapd_binary(), "analyze", dir.file("hostile.hprof"), "--no-index", "--html", dir.file("hostile.html")});
    ASSERT_EQ(analyzed.exit_code, 0) << analyzed.err;
    // Class and field names from a crafted file, and the diff of two such files.
    write_crafted_dump(dir.file("crafted-1.hprof"), 1);
    write_crafted_dump(dir.file("crafted-3.hprof"), 3);
    auto crafted = run_command(
        {heapd_binary(), "analyze", dir.file("crafted-3.hprof"), "--no-index", "--html", dir.file("crafted.html")});
    ASSERT_EQ(crafted.exit_code, 0) << crafted.err;
    auto diffed = run_command({heapd_binary(), "diff", dir.file("crafted-1.hprof"), dir.file("crafted-3.hprof"),
                               "--html", dir.file("crafted-diff.html")});
    ASSERT_EQ(diffed.exit_code, 0) << diffed.err;

    START_BROWSER(b, dir.path());
    ASSERT_TRUE(b->open(url_of(dir.file("hostile.html")))) << b->error();
    expect_inert(*b);
    const json shown = b->evaluate(R"js(({
      threads: [...document.querySelectorAll('#threads summary code')].map(c => c.textContent),
      strings: [...document.querySelectorAll('#duplicates-table td.cls')].map(c => c.textContent)}))js");
    EXPECT_NE(shown["threads"].dump().find(json(markup).dump().substr(1, 20)), std::string::npos) << shown;
    bool whole = false;
    for (const auto& t : shown["threads"]) whole = whole || t.get<std::string>() == "\"" + markup + "\"";
    EXPECT_TRUE(whole) << shown;
    bool copy = false;
    for (const auto& s : shown["strings"])
        copy = copy || s.get<std::string>().find("<script>window.pwned=1") != std::string::npos;
    EXPECT_TRUE(copy) << shown;
    expect_quiet(*b, url_of(dir.file("hostile.html")));

    const std::string evil = "evil<img src=x onerror=window.pwned=3>\"'";
    ASSERT_TRUE(b->open(url_of(dir.file("crafted.html")))) << b->error();
    expect_inert(*b);
    const json crafted_shown = b->evaluate(R"js(({
      suspect: document.querySelector('#suspects article').textContent,
      slices: [...document.querySelectorAll('#tree-view path.node')].length,
      label: document.querySelector('#histogram-table td.cls').textContent}))js");
    EXPECT_NE(crafted_shown["suspect"].get<std::string>().find(evil), std::string::npos) << crafted_shown;
    EXPECT_NE(crafted_shown["suspect"].get<std::string>().find("<svg onload=window.pwned=4>"), std::string::npos)
        << crafted_shown;
    EXPECT_GT(crafted_shown["slices"].get<int>(), 0) << crafted_shown;
    // Hovering a slice writes the name into the tooltip: as text too.
    b->evaluate(R"js(document.querySelector('#tree-view path.node').dispatchEvent(
        new MouseEvent('mousemove', {bubbles: true, clientX: 300, clientY: 300})))js");
    EXPECT_NE(b->evaluate("document.getElementById('tree-tip').textContent").get<std::string>().find("evil<img"),
              std::string::npos);
    expect_inert(*b);
    expect_quiet(*b, url_of(dir.file("crafted.html")));

    ASSERT_TRUE(b->open(url_of(dir.file("crafted-diff.html")))) << b->error();
    expect_inert(*b);
    const json labels =
        b->evaluate("[...document.querySelectorAll('#growth-chart .bar-label')].map(l => l.textContent)");
    EXPECT_NE(std::find(labels.begin(), labels.end(), evil), labels.end()) << labels;
    expect_quiet(*b, url_of(dir.file("crafted-diff.html")));
}

}  // namespace
}  // namespace heapd::test
