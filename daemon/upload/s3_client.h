#pragma once
// An S3-compatible bucket (AWS S3, MinIO, Ceph RGW) through libcurl: objects put whole or in parts
// (multipart upload), each request signed with AWS Signature V4 by libcurl itself
// (CURLOPT_AWS_SIGV4), the payload sent as UNSIGNED-PAYLOAD. Objects are addressed by path
// (ENDPOINT/BUCKET/KEY). Replies are read up to 64 KiB; a request that stalls is given up.
#include <atomic>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace heapd::daemon {

// Where the bucket is and who signs.
struct s3_target {
    std::string endpoint;  // "http://127.0.0.1:9000", no trailing '/'
    std::string bucket;
    std::string region;
    std::string access_key;
    std::string secret_key;
};

// Why a request failed: no answer (status 0, curl's reason), or the server's status and S3 code.
struct s3_error {
    int status = 0;
    std::string code;     // "SignatureDoesNotMatch", "NoSuchUpload", ...; "" when none was sent
    std::string message;  // for people; server text made safe and bounded
    // Worth trying again later: no answer, a timeout, 5xx, 429 (a 403 may be a clock or a secret
    // being fixed, so it is retried too, more slowly, by the caller's backoff).
    bool retryable() const { return status == 0 || status >= 500 || status == 429 || status == 408 || status == 403; }
};

template <class T>
using s3_result = std::expected<T, s3_error>;

// One part of a multipart upload, as CompleteMultipartUpload needs it.
struct s3_part {
    unsigned number = 0;  // 1 to 10000
    std::string etag;     // as the server gave it, quotes included
};

// An object as a listing names it.
struct s3_object {
    std::string key;
    std::uint64_t size = 0;
    std::string etag;  // as the server gave it, quotes included
};

// One page of a listing, and where the next begins ("" after the last).
struct s3_listing {
    std::vector<s3_object> objects;
    std::string next;
};

// A bucket; one request at a time.
class s3_client {
public:
    explicit s3_client(s3_target target);
    ~s3_client();
    s3_client(const s3_client&) = delete;
    s3_client& operator=(const s3_client&) = delete;

    // PUT of size bytes of fd from offset (pread: fd's offset is not used).
    s3_result<void> put_object(const std::string& key, int fd, std::uint64_t offset, std::uint64_t size,
                               std::string_view content_type);
    // CreateMultipartUpload: the upload's id.
    s3_result<std::string> create_multipart(const std::string& key, std::string_view content_type);
    // UploadPart: the part's ETag.
    s3_result<std::string> upload_part(const std::string& key, const std::string& upload_id, unsigned number, int fd,
                                       std::uint64_t offset, std::uint64_t size);
    s3_result<void> complete_multipart(const std::string& key, const std::string& upload_id,
                                       const std::vector<s3_part>& parts);
    s3_result<void> abort_multipart(const std::string& key, const std::string& upload_id);
    // ListObjectsV2 of the keys under prefix, one page (up to 1000 keys) from where `after` (a
    // previous page's next, "" for the first) says.
    s3_result<s3_listing> list_objects(const std::string& prefix, const std::string& after);
    // GET of a whole object of at most max_bytes (a bigger one fails with status 0, code "TooBig").
    s3_result<std::string> get_object(const std::string& key, std::size_t max_bytes);
    // HEAD: the object's size, nullopt when there is none.
    s3_result<std::optional<std::uint64_t>> object_size(const std::string& key);

    // Seconds a request may go without a byte moving before it is given up (default 60).
    void set_stall_timeout(long seconds) { stall_seconds_ = seconds; }
    // A request under way is given up as soon as *cancel is true (a stopping uploader).
    void set_cancel(const std::atomic<bool>* cancel) { cancel_ = cancel; }

private:
    struct request;
    struct reply {
        long status = 0;
        std::string body;
        std::size_t limit = 0;  // bytes of the body kept
        bool cut = false;       // the body was longer
        std::string etag;
        std::optional<std::uint64_t> length;
    };
    s3_result<reply> perform(const request& r, std::size_t reply_limit = 64 * 1024);
    std::string url(const std::string& key, std::string_view query) const;

    s3_target target_;
    void* curl_ = nullptr;
    long stall_seconds_ = 60;
    const std::atomic<bool>* cancel_ = nullptr;
};

// A key's characters percent-encoded as S3 expects in a path ('/' kept).
std::string s3_encode_key(std::string_view key);

}  // namespace heapd::daemon
