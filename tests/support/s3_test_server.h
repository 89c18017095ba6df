#pragma once
// An S3 server for the upload tests, as a separate process on the loopback: s3rver (npm) behind a
// front that checks AWS Signature V4 (tests/support/s3_test_server.js). Access key S3RVER.
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace heapd::test {

// The server; killed on destruction. Its objects and uploads under way stay in dir/data, so a
// server killed and started again has what it had.
class s3_test_server {
public:
    s3_test_server(std::string dir, std::string bucket, std::string secret);
    ~s3_test_server();
    s3_test_server(const s3_test_server&) = delete;
    s3_test_server& operator=(const s3_test_server&) = delete;

    // Starts it (again: on the same port and data) and waits until it answers (30 s).
    bool start();
    // SIGKILL: the server goes away, mid-request if one is under way.
    void kill();
    std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
    // Every object's key, sorted.
    std::vector<std::string> keys() const;
    // An object's bytes as stored; nullopt when there is none.
    std::optional<std::string> object(const std::string& key) const;
    // Multipart uploads begun and neither completed nor aborted.
    std::size_t open_uploads() const;
    // What the front said of requests it refused (one line each).
    std::string refusals() const;

    // Where .ci/setup installs s3rver (build/npm/node_modules/s3rver); "" when it is not there.
    static std::string s3rver_module();

private:
    std::string dir_, bucket_, secret_;
    int port_ = 0;
    pid_t pid_ = -1;
};

}  // namespace heapd::test
