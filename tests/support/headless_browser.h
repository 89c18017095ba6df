#pragma once
// A headless Chromium (Debian package chromium) driven over the DevTools protocol, for tests of heapd's HTML
// reports: what a page printed, which requests it made, what a script computes in it, how it looks.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace heapd::test {

// Something the open page reported: a console message, an uncaught exception, a browser log entry (CSP
// violations, network errors) or a failed load.
struct page_event {
    std::string kind;    // "console", "exception", "log" or "load_failed"
    std::string level;   // console: its type (log, error, warning...); log: its level; otherwise "error"
    std::string source;  // log: where from (security, network, javascript, other...); otherwise = kind
    std::string text;    // the message; for a log entry or failed load followed by " (URL)" when it has one
};

// A headless Chromium with its own fresh profile (also its HOME, so it writes nothing elsewhere), started over
// --remote-debugging-pipe, showing one page at a time. Its pages do not reach the network: an http(s) request,
// once the page's CSP let it through, is recorded and then failed (net::ERR_BLOCKED_BY_CLIENT) before it is
// sent. (WebSockets are not stopped.) Events are read while a call waits: what a page does after open()
// returned shows up once evaluate() or screenshot() ran. On destruction the browser's process group, and any
// process that left it (its crash handler), are killed, and its profile removed; a test that dies without
// destructors closes the pipe, on which chromium quits by itself.
class headless_browser {
public:
    // Whether /usr/bin/chromium is there.
    static bool chromium_installed();
    // Starts chromium (profile and its output, chromium-XXXXXX.log, in scratch_dir) and waits (up to 30 s) until it
    // answers; nullopt, with the reason in why_not, when it is not installed or does not answer. javascript_enabled =
    // false turns the pages' scripts off (Emulation.setScriptExecutionDisabled); evaluate() still works.
    static std::optional<headless_browser> start(const std::string& scratch_dir, bool javascript_enabled = true,
                                                 std::string* why_not = nullptr);
    ~headless_browser();
    headless_browser(headless_browser&&) noexcept;
    headless_browser& operator=(headless_browser&&) = delete;

    // Opens url in a fresh tab (closing the previous one, forgetting what it recorded) with every event
    // recorded from its first request, and waits for its load event; false (reason in error()) on a timeout
    // or a failed navigation.
    bool open(const std::string& url, int timeout_seconds = 30);
    // The value of a JavaScript expression in the open page (promises awaited) as JSON; null for undefined,
    // a string for NaN, Infinity or a BigInt. Throws std::runtime_error when it throws or times out.
    nlohmann::json evaluate(const std::string& expression, int timeout_seconds = 30);
    // Writes a PNG of the whole page laid out width CSS pixels wide (at least as tall as its 900 px viewport);
    // false (reason in error()) on failure.
    bool screenshot(const std::string& path, int width = 1400);

    // Console messages, uncaught exceptions, log entries and failed loads of the open page, in order.
    std::vector<page_event> console() const;
    // The URL of every request the open page made or tried (also those its CSP blocked), its own first.
    std::vector<std::string> requests() const;
    // Why the last open() or screenshot() failed.
    const std::string& error() const { return error_; }

private:
    struct connection;
    explicit headless_browser(std::unique_ptr<connection> c);
    std::unique_ptr<connection> c_;
    std::string error_;
};

}  // namespace heapd::test
