// Tests of the HTML report's page as text: strings from a dump can only ever be text, the data block
// holds the report's numbers, and nothing on the page names anything to load.
#include "formats/report/report_html.h"

#include <gtest/gtest.h>

#include <cctype>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "formats/report/html_assets.h"
#include "formats/report/html_writer.h"

namespace heapd {
namespace {

// The page's tags (from '<' followed by a letter to the next '>'), outside the data block.
std::vector<std::string> tags_of(const std::string& page) {
    std::vector<std::string> tags;
    const std::string open = "id=\"heapd-data\">";
    const auto data_from = page.find(open), data_to = page.find("</script>", data_from);
    for (std::size_t at = page.find('<'); at != std::string::npos; at = page.find('<', at + 1)) {
        if (at > data_from && at < data_to) continue;
        if (at + 1 < page.size() && std::isalpha(static_cast<unsigned char>(page[at + 1])))
            tags.push_back(page.substr(at, page.find('>', at) - at + 1));
    }
    return tags;
}

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// The JSON between <script type="application/json" id="heapd-data"> and its </script>.
nlohmann::json data_of(const std::string& page) {
    const std::string open = "<script type=\"application/json\" id=\"heapd-data\">";
    const auto from = page.find(open);
    EXPECT_NE(from, std::string::npos);
    const auto to = page.find("</script>", from);
    return nlohmann::json::parse(page.substr(from + open.size(), to - from - open.size()));
}

const std::string hostile = "</script><script>alert(\"x\")</script><img src=x onerror='alert(1)'>&amp;";

analysis_report hostile_report() {
    analysis_report r;
    r.summary.file = "dump-" + hostile + ".hprof";
    r.summary.shallow_bytes = 1000;
    r.histogram = {{1, hostile, 3, 600}, {2, "byte[]", 1, 400}};
    r.threads = {{hostile, "RUNNABLE", false, {hostile + ".run(" + hostile + ".java:1)"}}};
    r.retention.computed = true;
    r.retention.reachable_bytes = 1000;
    r.retention.reachable_objects = 4;
    r.retention.dominators = {{0x10, hostile, 16, 900}};
    r.retention.retained_by_class = {{hostile, 900}};
    leak_suspect s;
    s.suspect = {0x10, hostile, 16, 900};
    s.accumulation = {0x20, "java.lang.Object[]", 24, 880};
    s.retained_bytes = 900;
    s.share = 0.9;
    s.accumulated = {{hostile, 3, 600}};
    s.path.root_kinds = {"jni_global"};
    s.path.steps = {{0x10, hostile, false, "f\"'<>", 1}, {0x20, "java.lang.Object[]", false, "", 1}};
    s.allocated_at = {{hostile, hostile + "(X.java:1)", {hostile + "(X.java:1)"}, 600, 3, 1.0}};
    r.retention.leak_suspects = {s};
    r.retention.tree_min_share = 0.001;
    r.retention.tree = {{0x10, hostile, 16, 900, -1, 0},
                        {0x20, "java.lang.Object[]", 24, 880, 0, 0},
                        {0, "", 100, 100, -1, 2},
                        {0, "", 856, 856, 1, 3}};
    r.waste.computed = true;
    r.waste.duplicate_strings_top = {{hostile, 90, 2, 200}};
    return r;
}

TEST(report_html, strings_from_the_dump_are_text_wherever_they_appear) {
    const std::string page = render_html(hostile_report(), {});
    // The page's own two scripts, the data and the code, and no third.
    EXPECT_EQ(count(page, "<script"), 2u);
    EXPECT_EQ(count(page, "</script"), 2u);
    EXPECT_EQ(count(page, "<img"), 0u);
    for (const std::string& tag : tags_of(page)) EXPECT_EQ(tag.find(" on"), std::string::npos) << tag;
    // In the body, escaped: histogram, retainers, retained by class, suspect, path, allocation, thread, waste.
    EXPECT_GE(count(page, html::escape(hostile)), 8u);
    EXPECT_NE(page.find("&lt;/script&gt;&lt;script&gt;alert(&quot;x&quot;)"), std::string::npos);
    // In the data block, as JSON the script reads back whole.
    const nlohmann::json data = data_of(page);
    EXPECT_EQ(data.at("tree").at("nodes").at(0).at("class"), hostile);
    EXPECT_EQ(data.at("tree").at("nodes").at(0).at("suspect"), 1);
    EXPECT_EQ(data.at("tree").at("nodes").at(1).at("suspect"), 1);  // the accumulation point
    EXPECT_EQ(data.at("tree").at("nodes").at(2).at("class"), "2 others");
    EXPECT_EQ(data.at("tree").at("total"), 1000);
}

TEST(report_html, the_off_heap_section_shows_the_dumps_names_as_text) {
    analysis_report r = hostile_report();
    off_heap_report& o = r.off_heap;
    o.computed = true;
    gc_path path{{"sticky_class"},
                 {{0x10, hostile, true, "static " + hostile, 1}, {0x20, "java.nio.DirectByteBuffer", false, "", 1}},
                 1};
    o.direct_buffers.allocated = 3;
    o.direct_buffers.allocated_bytes = 3 << 20;
    o.direct_buffers.jvm_reserved_bytes = 3 << 20;
    o.direct_buffers.holders = {{3, 3 << 20, path}};
    o.threads.count = 1;
    o.threads.states = {{"RUNNABLE", 1}};
    o.threads.by_name = {{hostile, 1, hostile, {}}};
    o.threads.by_stack = {{hostile, 1, hostile, {}}};
    o.threads.holders = {{1, 0, path}};
    o.class_loaders.by_class = {{hostile, 2, 2}};
    o.class_loaders.duplicates = {{hostile, 2}};
    o.class_loaders.holders = {{2, 100, path}};
    const std::string page = render_html(r, {});
    const std::size_t at = page.find("<section id=\"off-heap\">");
    ASSERT_NE(at, std::string::npos);
    const std::string section = page.substr(at, page.find("</section>", at) - at);
    EXPECT_EQ(count(section, "<script"), 0u);
    EXPECT_EQ(count(section, "<img"), 0u);
    // Thread names twice each by name and by stack, three holder paths, the loader class, the duplicate.
    EXPECT_GE(count(section, html::escape(hostile)), 9u);
    for (const char* id :
         {"direct-buffers-table", "buffer-holders-table", "thread-names-table", "thread-stacks-table",
          "thread-holders-table", "loader-classes-table", "duplicate-classes-table", "loader-holders-table"})
        EXPECT_NE(section.find(id), std::string::npos) << id;
}

// A newline shows as \n (in a thread's stack it would begin a line of its own) and a right-to-left
// override as \u202e, in the body and in what the data block gives the page's script.
TEST(report_html, newlines_and_bidirectional_controls_from_the_dump_are_shown_not_obeyed) {
    const std::string forged = "com.x.A\nat forged.Frame(F.java:1)\xE2\x80\xAEgpj.exe";
    analysis_report r = hostile_report();
    r.threads[0].name = forged;
    r.threads[0].frames = {forged};
    r.retention.tree[0].class_name = forged;
    const std::string page = render_html(r, {});
    EXPECT_EQ(page.find("\xE2\x80\xAE"), std::string::npos);
    EXPECT_GE(count(page, "com.x.A\\nat forged.Frame(F.java:1)\\u202egpj.exe"), 2u);
    const nlohmann::json data = data_of(page);
    EXPECT_EQ(data.at("tree").at("nodes").at(0).at("class"), "com.x.A\nat forged.Frame(F.java:1)\\u202egpj.exe");
}

TEST(report_html, nothing_on_the_page_points_anywhere) {
    const std::string page = render_html(hostile_report(), {});
    EXPECT_NE(page.find("Content-Security-Policy\" content=\"default-src 'none'; script-src 'sha256-" +
                        std::string(html_assets::script_sha256) + "';"),
              std::string::npos);
    EXPECT_EQ(html_assets::script_sha256.size(), 44u);  // 32 bytes in base64
    EXPECT_EQ(count(page, "unsafe-inline"), 1u);        // the style's only: a style runs no code
    // The script names the SVG namespace (an identifier, never loaded); nothing else looks like an address.
    const std::string assets = std::string(html_assets::script) + std::string(html_assets::style);
    const std::string svg = "'http://www.w3.org/2000/svg'";
    EXPECT_EQ(count(assets, "http"), count(assets, svg));
    for (const char* load : {"url(", "@import", "src=", "href=", "fetch(", "XMLHttpRequest", "import(", "eval("})
        EXPECT_EQ(count(assets, load), 0u) << load;
    std::string page_without_svg = page;
    for (auto at = page_without_svg.find(svg); at != std::string::npos; at = page_without_svg.find(svg))
        page_without_svg.erase(at, svg.size());
    EXPECT_EQ(count(page_without_svg, "http"), count(page_without_svg, "http-equiv"));
    const auto tags = tags_of(page);
    EXPECT_GT(tags.size(), 50u);
    for (const std::string& tag : tags)
        for (const char* attribute : {" src=", " href=", " action=", " srcset=", " on"})
            EXPECT_EQ(tag.find(attribute), std::string::npos) << tag;
}

TEST(report_html, bytes_that_are_not_utf8_become_replacement_characters) {
    EXPECT_EQ(html::escape("a\xff"
                           "b\xc3\xa9\x01"),
              "a\xef\xbf\xbd"
              "b\xc3\xa9\\x01");
    EXPECT_EQ(html::escape("\xe2\x82"), "\xef\xbf\xbd\xef\xbf\xbd");
    analysis_report r;
    r.histogram = {{1, "bad\xff<", 1, 1}};
    const std::string page = render_html(r, {});
    EXPECT_NE(page.find("bad\xef\xbf\xbd&lt;"), std::string::npos);
}

TEST(report_html, a_diff_page_has_its_rows_as_data_and_tables) {
    diff_report d;
    d.before.file = "a.hprof";
    d.after.file = "b.hprof";
    d.grew = {{hostile, 1, 5, 100, 500, 0, 0, 4, 400, 0, false, false}};
    d.shrank = {{"byte[]", 5, 1, 500, 100, 0, 0, -4, -400, 0, false, false}};
    d.grew_classes = 1;
    d.shrank_classes = 1;
    const std::string page = render_html(d, "What grew");
    EXPECT_EQ(count(page, "<script"), 2u);
    const nlohmann::json data = data_of(page);
    ASSERT_EQ(data.at("growth").size(), 2u);
    EXPECT_EQ(data.at("growth").at(0).at("class"), hostile);
    EXPECT_EQ(data.at("growth").at(0).at("delta"), 400);
    EXPECT_EQ(data.at("growth").at(1).at("delta"), -400);
    EXPECT_NE(page.find("id=\"grew-table\""), std::string::npos);
    EXPECT_NE(page.find("id=\"shrank-table\""), std::string::npos);
}

}  // namespace
}  // namespace heapd
