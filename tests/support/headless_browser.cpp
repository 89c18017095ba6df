#include "support/headless_browser.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string_view>

namespace heapd::test {
namespace {

// The Chrome DevTools protocol's messages.
using cdp_json = nlohmann::json;
using steady = std::chrono::steady_clock;

constexpr const char* chromium = "/usr/bin/chromium";

std::string base64_decode(const std::string& in) {
    static const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    unsigned bits = 0;
    int pending = 0;
    for (char ch : in) {
        const size_t v = alphabet.find(ch);
        if (ch == '=') break;
        if (v == std::string::npos) continue;  // line breaks
        bits = bits << 6 | unsigned(v);
        if ((pending += 6) >= 8) out.push_back(char(bits >> (pending -= 8) & 0xff));
    }
    return out;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Writes all of data; false when the reader is gone. SIGPIPE is blocked meanwhile and a pending one taken
// back, so a browser that died fails the call instead of killing the test.
bool write_all(int fd, std::string_view data) {
    sigset_t pipe_signal, old;
    sigemptyset(&pipe_signal), sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, &old);
    for (ssize_t n = 0; !data.empty() && ((n = ::write(fd, data.data(), data.size())) > 0 || errno == EINTR);)
        if (n > 0) data.remove_prefix(size_t(n));
    const timespec now{};
    if (!data.empty() && !sigismember(&old, SIGPIPE)) sigtimedwait(&pipe_signal, nullptr, &now);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return data.empty();
}

// A RemoteObject (console argument, thrown value) as text.
std::string object_text(const cdp_json& o) {
    if (o.contains("value")) return o["value"].is_string() ? o["value"].get<std::string>() : o["value"].dump();
    for (const char* key : {"unserializableValue", "description", "type"})
        if (o.contains(key)) return o[key].get<std::string>();
    return {};
}

// What an ExceptionDetails says: "Uncaught" and the thrown value with its stack.
std::string exception_text(const cdp_json& details) {
    std::string text = details.value("text", "exception");
    if (details.contains("exception")) text += ": " + object_text(details["exception"]);
    return text;
}

// Kills every process whose command line mentions dir (a dying one has none): what is left of chromium's
// process group and what left it (its crash handler starts a session of its own). How many there were.
int kill_mentioning(const std::string& dir) {
    int found = 0;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string pid = entry.path().filename();
        if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
        if (read_file(entry.path() / "cmdline").find(dir) != std::string::npos)
            found += ::kill(std::stoi(pid), SIGKILL) == 0;
    }
    return found;
}

}  // namespace

// The running browser: its process (group), the pipe ends, its profile, and what the open page reported.
struct headless_browser::connection {
    pid_t pid = -1;
    int to_browser = -1, from_browser = -1;
    std::string profile_dir;
    bool javascript = true;
    int last_id = 0;
    std::string inbox;   // what the browser sent after the last whole message
    size_t scanned = 0;  // inbox holds no NUL before this
    std::string target_id, session_id, loader_id;
    bool loaded = false;
    std::vector<page_event> events;
    std::vector<std::string> requests;
    std::map<std::string, std::string> request_urls;  // requestId → URL

    ~connection() {
        if (pid > 0) {
            ::kill(-pid, SIGKILL);  // the group first, while the unreaped leader keeps its id taken
            ::kill(pid, SIGKILL);
            for (int i = 0; i < 500 && !profile_dir.empty() && kill_mentioning(profile_dir) > 0; ++i) ::usleep(10'000);
            while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {}
        }
        if (to_browser >= 0) ::close(to_browser);
        if (from_browser >= 0) ::close(from_browser);
        std::error_code ec;  // a process killed a moment ago may still have been adding a file
        for (int i = 0; !profile_dir.empty() && i < 20 && (std::filesystem::remove_all(profile_dir, ec), ec); ++i)
            ::usleep(50'000);
    }

    // The next message from the browser; throws when the deadline passes or the browser is gone.
    cdp_json next_message(steady::time_point deadline, const std::string& waiting_for) {
        for (;;) {
            if (size_t end = inbox.find('\0', scanned); end != std::string::npos) {
                cdp_json message = cdp_json::parse(inbox.begin(), inbox.begin() + long(end));
                inbox.erase(0, end + 1);
                scanned = 0;
                return message;
            }
            scanned = inbox.size();
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now()).count();
            if (left <= 0) throw std::runtime_error("timed out waiting for " + waiting_for);
            pollfd p{from_browser, POLLIN, 0};
            if (::poll(&p, 1, int(std::min<long>(left, 1000))) <= 0) continue;
            char buf[1 << 16];
            ssize_t n = ::read(from_browser, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) throw std::runtime_error("chromium closed its pipe (" + waiting_for + ")");
            inbox.append(buf, size_t(n));
        }
    }

    // Sends a command (to the open page's session when on_page); its id.
    int send(const std::string& method, const cdp_json& params, bool on_page) {
        cdp_json command = {{"id", ++last_id}, {"method", method}, {"params", params}};
        if (on_page) {
            if (session_id.empty()) throw std::runtime_error(method + ": no page open");
            command["sessionId"] = session_id;
        }
        if (!write_all(to_browser, command.dump() + '\0'))
            throw std::runtime_error("chromium closed its pipe (" + method + ")");
        return last_id;
    }

    // Sends a command and returns its result, recording the events that come meanwhile; throws on an error
    // reply, a timeout or a dead browser.
    cdp_json call(const std::string& method, const cdp_json& params, bool on_page, steady::time_point deadline) {
        const int id = send(method, params, on_page);
        cdp_json message;
        while ((message = next_message(deadline, method)).value("id", 0) != id) record(message);
        if (message.contains("error")) throw std::runtime_error(method + ": " + message["error"].dump());
        return message.value("result", cdp_json::object());
    }

    void record(const cdp_json& m) {
        if (!m.contains("method") || session_id.empty() || m.value("sessionId", "") != session_id) return;
        const std::string method = m["method"];
        const cdp_json& p = m["params"];
        if (method == "Fetch.requestPaused") {  // an http(s) request the page's CSP let through: it fails here
            send("Fetch.failRequest", {{"requestId", p["requestId"]}, {"errorReason", "BlockedByClient"}}, true);
        } else if (method == "Page.lifecycleEvent") {
            if (p.value("name", "") == "load" && p.value("loaderId", "") == loader_id) loaded = true;
        } else if (method == "Runtime.consoleAPICalled") {
            std::string text;
            for (const cdp_json& arg : p["args"]) text += (text.empty() ? "" : " ") + object_text(arg);
            events.push_back({"console", p.value("type", ""), "console", text});
        } else if (method == "Runtime.exceptionThrown") {
            events.push_back({"exception", "error", "exception", exception_text(p["exceptionDetails"])});
        } else if (method == "Log.entryAdded") {
            const cdp_json& e = p["entry"];
            std::string url = e.value("url", "");
            events.push_back({"log", e.value("level", ""), e.value("source", ""),
                              e.value("text", "") + (url.empty() ? "" : " (" + url + ")")});
        } else if (method == "Network.requestWillBeSent") {
            requests.push_back(request_urls[p.value("requestId", "")] = p["request"].value("url", ""));
        } else if (method == "Network.loadingFailed") {
            std::string text = p.value("errorText", "");
            if (p.contains("blockedReason")) text += " [blocked: " + p["blockedReason"].get<std::string>() + "]";
            events.push_back(
                {"load_failed", "error", "load_failed", text + " (" + request_urls[p.value("requestId", "")] + ")"});
        }
    }
};

bool headless_browser::chromium_installed() { return ::access(chromium, X_OK) == 0; }

std::optional<headless_browser> headless_browser::start(const std::string& scratch_dir, bool javascript_enabled,
                                                        std::string* why_not) {
    auto fail = [&](const std::string& why) {
        if (why_not != nullptr) *why_not = why;
        return std::nullopt;
    };
    if (!chromium_installed()) return fail(std::string(chromium) + " is not installed (Debian package chromium)");
    auto c = std::make_unique<connection>();
    c->javascript = javascript_enabled;
    std::string profile = scratch_dir + "/chromium-XXXXXX";
    if (::mkdtemp(profile.data()) == nullptr) return fail("mkdtemp in " + scratch_dir + ": " + std::strerror(errno));
    c->profile_dir = profile;
    const std::string log = profile + ".log";
    // Through env(1), with its home in the profile too, so that all it writes (crash reports...) goes there.
    std::vector<std::string> args = {"/usr/bin/env", "HOME=" + profile, "XDG_CONFIG_HOME=" + profile + "/.config"};
    args.insert(args.end(), {"XDG_CACHE_HOME=" + profile + "/.cache", chromium, "--user-data-dir=" + profile});
    for (const char* flag :
         {"--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--no-first-run",
          "--no-default-browser-check", "--disable-extensions", "--disable-background-networking", "--disable-sync",
          "--disable-component-update", "--disable-default-apps", "--mute-audio", "--password-store=basic",
          "--hide-scrollbars", "about:blank"})
        args.push_back(flag);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    int to[2], from[2];  // to: we write, chromium reads (its fd 3); from: chromium writes (its fd 4)
    if (::pipe2(to, O_CLOEXEC) != 0) return fail("pipe2 failed");
    c->to_browser = to[1];
    if (::pipe2(from, O_CLOEXEC) != 0) return ::close(to[0]), fail("pipe2 failed");
    c->from_browser = from[0];
    const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::setpgid(0, 0);
        const int in = ::fcntl(to[0], F_DUPFD, 10), out = ::fcntl(from[1], F_DUPFD, 10);  // above 0..4
        ::dup2(null_fd, 0), ::dup2(log_fd, 1), ::dup2(log_fd, 2), ::dup2(in, 3), ::dup2(out, 4);
        ::close_range(5, ~0U, 0);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    if (pid > 0) ::setpgid(pid, pid);  // also here, so that the group exists whichever runs first
    for (int fd : {to[0], from[1], null_fd, log_fd}) ::close(fd);
    if (pid < 0) return fail(std::string("fork failed: ") + std::strerror(errno));
    c->pid = pid;
    try {
        c->call("Browser.getVersion", cdp_json::object(), false, steady::now() + std::chrono::seconds(30));
    } catch (const std::exception& e) {
        return fail(std::string(e.what()) + "; its log " + log + " ends with:\n" +
                    read_file(log).substr(std::max<long>(0, long(read_file(log).size()) - 2000)));
    }
    return headless_browser(std::move(c));
}

headless_browser::headless_browser(std::unique_ptr<connection> c) : c_(std::move(c)) {}
headless_browser::headless_browser(headless_browser&&) noexcept = default;
headless_browser::~headless_browser() = default;

bool headless_browser::open(const std::string& url, int timeout_seconds) {
    connection& c = *c_;
    const auto deadline = steady::now() + std::chrono::seconds(timeout_seconds);
    error_.clear();
    try {
        if (!c.target_id.empty()) c.call("Target.closeTarget", {{"targetId", c.target_id}}, false, deadline);
        c.session_id = c.loader_id = {};
        c.target_id =
            c.call("Target.createTarget", {{"url", "about:blank"}}, false, deadline)["targetId"].get<std::string>();
        c.session_id = c.call("Target.attachToTarget", {{"targetId", c.target_id}, {"flatten", true}}, false,
                              deadline)["sessionId"]
                           .get<std::string>();
        for (const char* domain : {"Runtime", "Log", "Network", "Page"})
            c.call(std::string(domain) + ".enable", cdp_json::object(), true, deadline);
        c.call("Page.setLifecycleEventsEnabled", {{"enabled", true}}, true, deadline);
        const cdp_json remote = cdp_json::array({{{"urlPattern", "http://*"}}, {{"urlPattern", "https://*"}}});
        c.call("Fetch.enable", {{"patterns", remote}}, true, deadline);
        if (!c.javascript) c.call("Emulation.setScriptExecutionDisabled", {{"value", true}}, true, deadline);
        c.events.clear(), c.requests.clear(), c.request_urls.clear();
        c.loaded = false;
        cdp_json navigation = c.call("Page.navigate", {{"url", url}}, true, deadline);
        if (const std::string failed = navigation.value("errorText", ""); !failed.empty())
            return error_ = "cannot open " + url + ": " + failed, false;
        c.loader_id = navigation.value("loaderId", "");
        while (!c.loaded) c.record(c.next_message(deadline, "load event of " + url));
        return true;
    } catch (const std::exception& e) {
        return error_ = e.what(), false;
    }
}

cdp_json headless_browser::evaluate(const std::string& expression, int timeout_seconds) {
    cdp_json r =
        c_->call("Runtime.evaluate", {{"expression", expression}, {"returnByValue", true}, {"awaitPromise", true}},
                 true, steady::now() + std::chrono::seconds(timeout_seconds));
    if (r.contains("exceptionDetails"))
        throw std::runtime_error("evaluate(" + expression + "): " + exception_text(r["exceptionDetails"]));
    const cdp_json& value = r["result"];
    if (value.contains("value")) return value["value"];
    if (value.contains("unserializableValue")) return value["unserializableValue"];
    return nullptr;
}

bool headless_browser::screenshot(const std::string& path, int width) {
    const auto deadline = steady::now() + std::chrono::seconds(60);
    error_.clear();
    try {
        c_->call("Emulation.setDeviceMetricsOverride",
                 {{"width", width}, {"height", 900}, {"deviceScaleFactor", 1}, {"mobile", false}}, true, deadline);
        const cdp_json size = c_->call("Page.getLayoutMetrics", cdp_json::object(), true, deadline)["cssContentSize"];
        const double w = std::ceil(size["width"].get<double>()), h = std::ceil(size["height"].get<double>());
        const cdp_json clip = {{"x", 0}, {"y", 0}, {"width", w}, {"height", h}, {"scale", 1}};
        const cdp_json shot =
            c_->call("Page.captureScreenshot", {{"format", "png"}, {"captureBeyondViewport", true}, {"clip", clip}},
                     true, deadline);
        const std::string png = base64_decode(shot["data"].get<std::string>());
        if (!(std::ofstream(path, std::ios::binary) << png).flush()) return error_ = "cannot write " + path, false;
        return true;
    } catch (const std::exception& e) {
        return error_ = e.what(), false;
    }
}

std::vector<page_event> headless_browser::console() const { return c_->events; }
std::vector<std::string> headless_browser::requests() const { return c_->requests; }

}  // namespace heapd::test
