#include "daemon/upload/s3_client.h"

#include <curl/curl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>
#include <vector>

#include "daemon/runtime/log_text.h"

namespace heapd::daemon {
namespace {

std::once_flag curl_init;

// What a request sends: the bytes of a file range, or of a string, or nothing.
struct body_source {
    int fd = -1;
    std::uint64_t offset = 0, size = 0, sent = 0;
    std::string_view text;
};

std::size_t read_body(char* buffer, std::size_t size, std::size_t count, void* user) {
    auto* b = static_cast<body_source*>(user);
    const std::size_t room = size * count;
    const std::uint64_t left = b->size - b->sent;
    const std::size_t want = left < room ? static_cast<std::size_t>(left) : room;
    if (want == 0) return 0;
    if (b->fd < 0) {
        std::memcpy(buffer, b->text.data() + b->sent, want);
        b->sent += want;
        return want;
    }
    ssize_t n;
    do n = ::pread(b->fd, buffer, want, static_cast<off_t>(b->offset + b->sent));
    while (n < 0 && errno == EINTR);
    if (n <= 0) return CURL_READFUNC_ABORT;  // the file shrank or failed: the request fails
    b->sent += static_cast<std::uint64_t>(n);
    return static_cast<std::size_t>(n);
}

// Where a reply's body goes: kept up to limit, and whether more came.
struct body_sink {
    std::string* body;
    std::size_t limit;
    bool* cut;
};

std::size_t write_reply(char* data, std::size_t size, std::size_t count, void* user) {
    auto* sink = static_cast<body_sink*>(user);
    const std::size_t n = size * count;
    const std::size_t room = sink->limit - std::min(sink->limit, sink->body->size());
    sink->body->append(data, std::min(n, room));
    if (n > room) *sink->cut = true;
    return n;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    const auto* cancel = static_cast<const std::atomic<bool>*>(user);
    return cancel != nullptr && cancel->load() ? 1 : 0;
}

std::size_t read_header(char* data, std::size_t size, std::size_t count, void* user) {
    auto* etag = static_cast<std::string*>(user);
    const std::size_t n = size * count;
    std::string_view line(data, n);
    if (line.size() > 5 && strncasecmp(line.data(), "etag:", 5) == 0) {
        line.remove_prefix(5);
        while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
        while (!line.empty() && (line.back() == '\r' || line.back() == '\n' || line.back() == ' '))
            line.remove_suffix(1);
        if (line.size() <= 256) *etag = std::string(line);
    }
    return n;
}

// The text of <Tag>...</Tag> in an S3 XML reply, "" when absent.
std::string xml_value(const std::string& xml, std::string_view tag) {
    const std::string open = "<" + std::string(tag) + ">", close = "</" + std::string(tag) + ">";
    const auto at = xml.find(open);
    if (at == std::string::npos) return "";
    const auto end = xml.find(close, at + open.size());
    if (end == std::string::npos) return "";
    return xml.substr(at + open.size(), end - at - open.size());
}

// The XML text with its five entities (and numeric ones below 128) replaced.
std::string xml_text(std::string_view raw) {
    std::string out;
    for (std::size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] != '&') {
            out += raw[i];
            continue;
        }
        const auto semi = raw.find(';', i);
        if (semi == std::string_view::npos || semi - i > 8) {
            out += raw[i];
            continue;
        }
        const std::string_view entity = raw.substr(i + 1, semi - i - 1);
        char c = 0;
        if (entity == "amp")
            c = '&';
        else if (entity == "lt")
            c = '<';
        else if (entity == "gt")
            c = '>';
        else if (entity == "quot")
            c = '"';
        else if (entity == "apos")
            c = '\'';
        else if (entity.size() > 1 && entity[0] == '#') {
            unsigned long v = entity[1] == 'x' ? std::strtoul(std::string(entity.substr(2)).c_str(), nullptr, 16)
                                               : std::strtoul(std::string(entity.substr(1)).c_str(), nullptr, 10);
            if (v > 0 && v < 128) c = static_cast<char>(v);
        }
        if (c == 0) {
            out += raw[i];
            continue;
        }
        out += c;
        i = semi;
    }
    return out;
}

// Each <Tag>...</Tag> element's inner text in xml, in order.
std::vector<std::string_view> xml_elements(std::string_view xml, std::string_view tag) {
    const std::string open = "<" + std::string(tag) + ">", close = "</" + std::string(tag) + ">";
    std::vector<std::string_view> out;
    for (std::size_t at = xml.find(open); at != std::string_view::npos; at = xml.find(open, at)) {
        const auto end = xml.find(close, at + open.size());
        if (end == std::string_view::npos) break;
        out.push_back(xml.substr(at + open.size(), end - at - open.size()));
        at = end + close.size();
    }
    return out;
}

bool unreserved(unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_' || c == '~';
}

std::string encode(std::string_view text, bool keep_slash) {
    static const char hex[] = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : text) {
        if (unreserved(c) || (keep_slash && c == '/')) {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

}  // namespace

std::string s3_encode_key(std::string_view key) { return encode(key, true); }

// One request: method, key, query (already in canonical order and encoded), body.
struct s3_client::request {
    const char* method = "GET";
    std::string key;
    std::string query;
    body_source body;
    bool has_body = false;
    std::string content_type;
    bool head = false;
};

s3_client::s3_client(s3_target target) : target_(std::move(target)) {
    std::call_once(curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    curl_ = curl_easy_init();
}

s3_client::~s3_client() {
    if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

std::string s3_client::url(const std::string& key, std::string_view query) const {
    std::string u = target_.endpoint + "/" + encode(target_.bucket, false) + "/" + s3_encode_key(key);
    if (!query.empty()) u += "?" + std::string(query);
    return u;
}

s3_result<s3_client::reply> s3_client::perform(const request& r, std::size_t reply_limit) {
    CURL* c = static_cast<CURL*>(curl_);
    if (c == nullptr) return std::unexpected(s3_error{0, "", "libcurl could not make a handle"});
    curl_easy_reset(c);
    const std::string address = url(r.key, r.query);
    const std::string sigv4 = "aws:amz:" + target_.region + ":s3";
    const std::string credentials = target_.access_key + ":" + target_.secret_key;
    reply out;
    out.limit = reply_limit;
    body_sink sink{&out.body, reply_limit, &out.cut};
    body_source body = r.body;
    curl_slist* headers = nullptr;
    // libcurl signs what it sends; S3 wants the payload's hash named, and takes UNSIGNED-PAYLOAD.
    headers = curl_slist_append(headers, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
    if (!r.content_type.empty()) headers = curl_slist_append(headers, ("Content-Type: " + r.content_type).c_str());
    // No "Expect:" to turn 100-continue off: libcurl would sign that header without sending it.
    curl_easy_setopt(c, CURLOPT_URL, address.c_str());
    curl_easy_setopt(c, CURLOPT_AWS_SIGV4, sigv4.c_str());
    curl_easy_setopt(c, CURLOPT_USERPWD, credentials.c_str());
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, stall_seconds_);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_reply);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, read_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &out.etag);
    if (r.head) {
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    } else if (r.has_body) {
        curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(c, CURLOPT_READFUNCTION, read_body);
        curl_easy_setopt(c, CURLOPT_READDATA, &body);
        curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(body.size));
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, r.method);
    } else if (std::strcmp(r.method, "POST") == 0) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, 0L);
    } else {
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, r.method);
    }
    if (cancel_ != nullptr) {
        curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(c, CURLOPT_XFERINFODATA, const_cast<std::atomic<bool>*>(cancel_));
    }
    char error[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
    const CURLcode done = curl_easy_perform(c);
    curl_slist_free_all(headers);
    if (done != CURLE_OK)
        return std::unexpected(s3_error{0, "", bounded_text(*error != '\0' ? error : curl_easy_strerror(done), 256)});
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out.status);
    curl_off_t length = -1;
    if (curl_easy_getinfo(c, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK && length >= 0)
        out.length = static_cast<std::uint64_t>(length);
    if (out.status >= 200 && out.status < 300) return out;
    s3_error e;
    e.status = static_cast<int>(out.status);
    e.code = bounded_text(xml_value(out.body, "Code"), 64);
    e.message = "HTTP " + std::to_string(out.status) + (e.code.empty() ? "" : " " + e.code) + ": " +
                bounded_text(xml_value(out.body, "Message"), 256);
    return std::unexpected(e);
}

s3_result<void> s3_client::put_object(const std::string& key, int fd, std::uint64_t offset, std::uint64_t size,
                                      std::string_view content_type) {
    request r{"PUT", key, "", body_source{fd, offset, size, 0, {}}, true, std::string(content_type)};
    auto done = perform(r);
    if (!done) return std::unexpected(done.error());
    return {};
}

s3_result<std::string> s3_client::create_multipart(const std::string& key, std::string_view content_type) {
    request r{"POST", key, "uploads=", {}, false, std::string(content_type)};
    auto done = perform(r);
    if (!done) return std::unexpected(done.error());
    std::string id = xml_value(done->body, "UploadId");
    if (id.empty() || id.size() > 1024)
        return std::unexpected(s3_error{static_cast<int>(done->status), "", "no UploadId in the reply"});
    return id;
}

s3_result<std::string> s3_client::upload_part(const std::string& key, const std::string& upload_id, unsigned number,
                                              int fd, std::uint64_t offset, std::uint64_t size) {
    request r{"PUT",
              key,
              "partNumber=" + std::to_string(number) + "&uploadId=" + encode(upload_id, false),
              body_source{fd, offset, size, 0, {}},
              true,
              ""};
    auto done = perform(r);
    if (!done) return std::unexpected(done.error());
    if (done->etag.empty())
        return std::unexpected(s3_error{static_cast<int>(done->status), "", "no ETag for the part"});
    return done->etag;
}

s3_result<void> s3_client::complete_multipart(const std::string& key, const std::string& upload_id,
                                              const std::vector<s3_part>& parts) {
    std::string xml = "<CompleteMultipartUpload>";
    for (const s3_part& p : parts)
        xml += "<Part><PartNumber>" + std::to_string(p.number) + "</PartNumber><ETag>" + p.etag + "</ETag></Part>";
    xml += "</CompleteMultipartUpload>";
    body_source body;
    body.text = xml;
    body.size = xml.size();
    request r{"POST", key, "uploadId=" + encode(upload_id, false), body, true, "application/xml"};
    auto done = perform(r);
    if (!done) return std::unexpected(done.error());
    // S3 may answer 200 with an error in the body once the work took long.
    if (const std::string code = xml_value(done->body, "Code"); !code.empty())
        return std::unexpected(
            s3_error{500, bounded_text(code, 64), "CompleteMultipartUpload: " + bounded_text(code, 64)});
    return {};
}

s3_result<void> s3_client::abort_multipart(const std::string& key, const std::string& upload_id) {
    request r{"DELETE", key, "uploadId=" + encode(upload_id, false), {}, false, ""};
    auto done = perform(r);
    if (!done) return std::unexpected(done.error());
    return {};
}

s3_result<s3_listing> s3_client::list_objects(const std::string& prefix, const std::string& after) {
    // The query in canonical order (sorted by name), as SigV4 signs it.
    std::string query;
    if (!after.empty()) query += "continuation-token=" + encode(after, false) + "&";
    query += "list-type=2&max-keys=1000";
    if (!prefix.empty()) query += "&prefix=" + encode(prefix, false);
    request r{"GET", "", query, {}, false, ""};
    auto done = perform(r, 16u << 20);
    if (!done) return std::unexpected(done.error());
    if (done->cut) return std::unexpected(s3_error{0, "TooBig", "a listing page longer than 16 MiB"});
    s3_listing page;
    for (std::string_view contents : xml_elements(done->body, "Contents")) {
        s3_object o;
        const std::string one(contents);
        o.key = xml_text(xml_value(one, "Key"));
        o.size = std::strtoull(xml_value(one, "Size").c_str(), nullptr, 10);
        o.etag = xml_text(xml_value(one, "ETag"));
        if (!o.key.empty()) page.objects.push_back(std::move(o));
    }
    if (xml_value(done->body, "IsTruncated") == "true") {
        page.next = xml_text(xml_value(done->body, "NextContinuationToken"));
        if (page.next.empty())
            return std::unexpected(s3_error{0, "", "a listing said more follows but gave no continuation token"});
    }
    return page;
}

s3_result<std::string> s3_client::get_object(const std::string& key, std::size_t max_bytes) {
    request r{"GET", key, "", {}, false, ""};
    auto done = perform(r, max_bytes);
    if (!done) return std::unexpected(done.error());
    if (done->cut)
        return std::unexpected(s3_error{0, "TooBig", key + " is longer than " + std::to_string(max_bytes) + " bytes"});
    return std::move(done->body);
}

s3_result<std::optional<std::uint64_t>> s3_client::object_size(const std::string& key) {
    request r{"HEAD", key, "", {}, false, ""};
    r.head = true;
    auto done = perform(r);
    if (!done) {
        if (done.error().status == 404) return std::optional<std::uint64_t>{};
        return std::unexpected(done.error());
    }
    return std::optional<std::uint64_t>{done->length.value_or(0)};
}

}  // namespace heapd::daemon
