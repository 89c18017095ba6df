// The headless Chromium driver against small pages of its own: what it records, evaluates and shows, and that
// it leaves nothing behind.
#include "support/headless_browser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "support/jvm_process.h"

namespace heapd::test {
namespace {

constexpr const char* no_chromium = "needs /usr/bin/chromium (Debian package chromium)";

// Writes html to dir/name; its file:// URL.
std::string page(const scratch_dir& dir, const std::string& name, const std::string& html) {
    std::ofstream(dir.file(name)) << html;
    return "file://" + dir.file(name);
}

// Whether the browser recorded an event of that kind whose text has needle.
bool has_event(const headless_browser& browser, const std::string& kind, const std::string& needle) {
    for (const auto& e : browser.console())
        if (e.kind == kind && e.text.find(needle) != std::string::npos) return true;
    return false;
}

// Everything the open page recorded, for failure messages.
std::string recorded(const headless_browser& browser) {
    std::string out = "\nrecorded:\n";
    for (const auto& e : browser.console())
        out += "  " + e.kind + "/" + e.level + "/" + e.source + ": " + e.text + "\n";
    for (const auto& url : browser.requests()) out += "  request " + url + "\n";
    return out;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A PNG's size from its IHDR chunk: width and height, big-endian, at bytes 16 and 20.
unsigned png_dimension(const std::string& png, size_t at) {
    unsigned v = 0;
    for (size_t i = at; i < at + 4 && i < png.size(); ++i) v = v << 8 | static_cast<unsigned char>(png[i]);
    return v;
}

TEST(headless_browser, records_console_messages_and_uncaught_exceptions) {
    if (!headless_browser::chromium_installed()) GTEST_SKIP() << no_chromium;
    scratch_dir dir;
    std::string why;
    auto browser = headless_browser::start(dir.path(), true, &why);
    ASSERT_TRUE(browser) << why;
    ASSERT_TRUE(browser->open(page(dir, "errors.html", R"html(<!DOCTYPE html><title>errors</title><script>
        console.log("heapd-test: a log line");
        console.error("heapd-test: boom", 42);
        throw new Error("heapd-test: uncaught");
        </script>)html")))
        << browser->error();
    const auto events = browser->console();
    EXPECT_TRUE(has_event(*browser, "console", "heapd-test: a log line")) << recorded(*browser);
    EXPECT_TRUE(std::any_of(events.begin(), events.end(), [](const page_event& e) {
        return e.kind == "console" && e.level == "error" && e.text == "heapd-test: boom 42";
    })) << recorded(*browser);
    EXPECT_TRUE(has_event(*browser, "exception", "heapd-test: uncaught")) << recorded(*browser);
}

TEST(headless_browser, records_every_request_and_keeps_them_off_the_network) {
    if (!headless_browser::chromium_installed()) GTEST_SKIP() << no_chromium;
    scratch_dir dir;
    std::string why;
    auto browser = headless_browser::start(dir.path(), true, &why);
    ASSERT_TRUE(browser) << why;
    const std::string url =
        page(dir, "image.html", R"html(<!DOCTYPE html><title>image</title><img src="http://192.0.2.1/x.png">)html");
    ASSERT_TRUE(browser->open(url)) << browser->error();
    const auto requests = browser->requests();
    ASSERT_FALSE(requests.empty());
    EXPECT_EQ(requests.front(), url);
    EXPECT_TRUE(std::count(requests.begin(), requests.end(), "http://192.0.2.1/x.png") == 1) << recorded(*browser);
    EXPECT_TRUE(has_event(*browser, "load_failed", "ERR_BLOCKED_BY_CLIENT")) << recorded(*browser);
}

TEST(headless_browser, logs_what_the_content_security_policy_blocks) {
    if (!headless_browser::chromium_installed()) GTEST_SKIP() << no_chromium;
    scratch_dir dir;
    std::string why;
    auto browser = headless_browser::start(dir.path(), true, &why);
    ASSERT_TRUE(browser) << why;
    ASSERT_TRUE(browser->open(page(dir, "csp.html", R"html(<!DOCTYPE html><html><head>
        <meta http-equiv="Content-Security-Policy" content="default-src 'none'"><title>csp</title></head>
        <body><img src="http://192.0.2.1/x.png"></body></html>)html")))
        << browser->error();
    const auto events = browser->console();
    EXPECT_TRUE(std::any_of(events.begin(), events.end(), [](const page_event& e) {
        return e.kind == "log" && e.source == "security" &&
               e.text.find("Content Security Policy") != std::string::npos &&
               e.text.find("http://192.0.2.1/x.png") != std::string::npos;
    })) << recorded(*browser);
}

TEST(headless_browser, evaluates_expressions_in_the_page) {
    if (!headless_browser::chromium_installed()) GTEST_SKIP() << no_chromium;
    scratch_dir dir;
    std::string why;
    auto browser = headless_browser::start(dir.path(), true, &why);
    ASSERT_TRUE(browser) << why;
    ASSERT_TRUE(browser->open(page(dir, "values.html", R"html(<!DOCTYPE html><title>values</title>
        <p id="p">static</p><script>window.answer = 42;</script>)html")))
        << browser->error();
    EXPECT_EQ(browser->evaluate("1 + 2"), 3);
    EXPECT_EQ(browser->evaluate("answer"), 42);
    EXPECT_EQ(browser->evaluate("document.title"), "values");
    EXPECT_EQ(browser->evaluate("({a: [1, 'x'], b: null})"), nlohmann::json::parse(R"({"a": [1, "x"], "b": null})"));
    EXPECT_EQ(browser->evaluate("new Promise(done => setTimeout(() => done('later'), 10))"), "later");
    EXPECT_TRUE(browser->evaluate("undefined").is_null());
    EXPECT_EQ(browser->evaluate("1 / 0"), "Infinity");
    EXPECT_THROW(browser->evaluate("no_such_thing.x"), std::runtime_error);
    EXPECT_THROW(browser->evaluate("Promise.reject(new Error('no'))"), std::runtime_error);
}

TEST(headless_browser, runs_no_scripts_when_javascript_is_off) {
    if (!headless_browser::chromium_installed()) GTEST_SKIP() << no_chromium;
    scratch_dir dir;
    const std::string url = page(dir, "script.html", R"html(<!DOCTYPE html><title>script</title><p id="p">static</p>
        <script>document.getElementById("p").textContent = "changed"; console.log("heapd-test: ran");</script>)html");
    for (bool javascript : {true, false}) {
        SCOPED_TRACE(javascript ? "javascript on" : "javascript off");
        std::string why;
        auto browser = headless_browser::start(dir.path(), javascript, &why);
        ASSERT_TRUE(browser) << why;
        ASSERT_TRUE(browser->open(url)) << browser->error();
        EXPECT_EQ(browser->evaluate("document.getElementById('p').textContent"),
                  std::string(javascript ? "changed" : "static"));
        EXPECT_EQ(has_event(*browser, "console", "heapd-test: ran"), javascript) << recorded(*browser);
    }
}

TEST(headless_browser, screenshots_the_whole_page) {
    if (!headless_browser::chromium_installed()) GTEST_SKIP() << no_chromium;
    scratch_dir dir;
    std::string why;
    auto browser = headless_browser::start(dir.path(), true, &why);
    ASSERT_TRUE(browser) << why;
    ASSERT_TRUE(browser->open(page(dir, "tall.html", R"html(<!DOCTYPE html><title>tall</title>
        <body style="margin: 0"><div style="height: 3000px; background: linear-gradient(red, blue)">top</div>)html")))
        << browser->error();
    ASSERT_TRUE(browser->screenshot(dir.file("tall.png"), 1000)) << browser->error();
    const std::string png = read_file(dir.file("tall.png"));
    ASSERT_GT(png.size(), 24u);
    EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
    EXPECT_EQ(png_dimension(png, 16), 1000u);
    EXPECT_EQ(png_dimension(png, 20), 3000u);
}

TEST(headless_browser, forgets_the_previous_page_and_fails_on_a_missing_one) {
    if (!headless_browser::chromium_installed()) GTEST_SKIP() << no_chromium;
    scratch_dir dir;
    std::string why;
    auto browser = headless_browser::start(dir.path(), true, &why);
    ASSERT_TRUE(browser) << why;
    ASSERT_TRUE(browser->open(page(dir, "first.html", "<title>first</title><script>console.log('first')</script>")));
    ASSERT_TRUE(has_event(*browser, "console", "first")) << recorded(*browser);
    const std::string second = page(dir, "second.html", "<title>second</title>");
    ASSERT_TRUE(browser->open(second)) << browser->error();
    EXPECT_TRUE(browser->console().empty()) << recorded(*browser);
    EXPECT_EQ(browser->requests(), std::vector<std::string>{second});
    EXPECT_EQ(browser->evaluate("document.title"), "second");
    EXPECT_FALSE(browser->open("file://" + dir.file("missing.html")));
    EXPECT_NE(browser->error().find("ERR_FILE_NOT_FOUND"), std::string::npos) << browser->error();
}

TEST(headless_browser, leaves_no_process_and_no_profile_behind) {
    if (!headless_browser::chromium_installed()) GTEST_SKIP() << no_chromium;
    scratch_dir dir;
    std::string why;
    auto browser = headless_browser::start(dir.path(), true, &why);
    ASSERT_TRUE(browser) << why;
    ASSERT_TRUE(browser->open(page(dir, "plain.html", "<!DOCTYPE html><title>plain</title>"))) << browser->error();
    std::string profile;
    for (const auto& e : std::filesystem::directory_iterator(dir.path()))
        if (e.is_directory() && e.path().filename().string().starts_with("chromium-")) profile = e.path();
    ASSERT_FALSE(profile.empty());
    browser.reset();
    EXPECT_FALSE(std::filesystem::exists(profile));
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
        const std::string cmdline = read_file((e.path() / "cmdline").string());
        EXPECT_EQ(cmdline.find(profile), std::string::npos) << e.path() << " still runs: " << cmdline;
    }
}

}  // namespace
}  // namespace heapd::test
