#include "daemon/fleet/fleet_source.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <utility>

#include "base/fd_io.h"

namespace heapd::daemon {
namespace {

constexpr const char* summary_file = "summary.json";
constexpr const char* report_file = "report.json";
constexpr int max_depth = 8;

// Keeps, per report directory, the summary when there is one, else the report.
void keep(std::map<std::string, fleet_listed>& found, fleet_listed item) {
    auto [at, fresh] = found.try_emplace(item.key, item);
    if (!fresh && item.file == summary_file) at->second = std::move(item);
}

result<std::vector<fleet_listed>> listed(std::map<std::string, fleet_listed>& found) {
    std::vector<fleet_listed> out;
    out.reserve(found.size());
    for (auto& [key, item] : found) out.push_back(std::move(item));
    return out;
}

// The bucket, listed page by page; a client per worker.
class bucket : public fleet_source {
public:
    bucket(const s3_target& target, std::string prefix, unsigned connections)
        : name_(target.bucket), endpoint_(target.endpoint), prefix_(std::move(prefix)) {
        while (!prefix_.empty() && prefix_.back() == '/') prefix_.pop_back();
        for (unsigned i = 0; i < std::max(connections, 1u); ++i)
            clients_.push_back(std::make_unique<s3_client>(target));
    }

    result<std::vector<fleet_listed>> list() override {
        std::map<std::string, fleet_listed> found;
        std::string after;
        do {
            auto page = clients_.front()->list_objects(prefix_.empty() ? "" : prefix_ + "/", after);
            if (!page) return fail(error_code::io, "cannot list " + describe() + ": " + page.error().message);
            for (s3_object& o : page->objects) {
                const auto slash = o.key.rfind('/');
                if (slash == std::string::npos) continue;
                const std::string file = o.key.substr(slash + 1);
                if (file != summary_file && file != report_file) continue;
                keep(found, {o.key.substr(0, slash), file, o.etag, o.size});
                if (found.size() > max_fleet_reports)
                    return fail(error_code::bad_value,
                                describe() + " holds more than " + std::to_string(max_fleet_reports) + " reports");
            }
            after = std::move(page->next);
        } while (!after.empty());
        return listed(found);
    }

    result<std::string> read(const fleet_listed& item, std::size_t max_bytes, unsigned worker) override {
        auto bytes = clients_.at(worker)->get_object(item.key + "/" + item.file, max_bytes);
        if (!bytes)
            return fail(error_code::io, "cannot read " + item.key + "/" + item.file + ": " + bytes.error().message);
        return std::move(*bytes);
    }

    unsigned readers() const override { return static_cast<unsigned>(clients_.size()); }

    std::string describe() const override { return "s3://" + name_ + (prefix_.empty() ? "" : "/" + prefix_); }

    std::string page_link(const std::string& key, const std::string& base) const override {
        const std::string root = base.empty() ? endpoint_ + "/" + name_ + "/" : base;
        return root + s3_encode_key(key) + "/report.html";
    }

private:
    std::string name_, endpoint_, prefix_;
    std::vector<std::unique_ptr<s3_client>> clients_;
};

// A local tree, read through descriptors beneath its root.
class directory : public fleet_source {
public:
    directory(unique_fd root, std::string path, unsigned readers)
        : root_(std::move(root)), path_(std::move(path)), readers_(std::max(readers, 1u)) {}

    result<std::vector<fleet_listed>> list() override {
        std::map<std::string, fleet_listed> found;
        // Directories still to read, by key (an explicit stack, no recursion; one open at a time, so
        // that a wide tree never runs out of descriptors).
        std::vector<std::string> pending = {""};
        while (!pending.empty()) {
            const std::string key = std::move(pending.back());
            pending.pop_back();
            const int depth = key.empty() ? 0 : static_cast<int>(std::count(key.begin(), key.end(), '/')) + 1;
            unique_fd fd = open_beneath(key.empty() ? "." : key, O_RDONLY | O_DIRECTORY);
            DIR* d = fd ? ::fdopendir(fd.get()) : nullptr;
            if (d == nullptr && key.empty())
                return fail(error_code::io, "cannot read " + path_ + ": " + std::strerror(errno));
            if (d == nullptr) continue;       // replaced by a link, or gone, since it was listed
            const int dir_fd = fd.release();  // closedir closes it
            while (const dirent* e = ::readdir(d)) {
                const std::string name = e->d_name;
                if (name == "." || name == "..") continue;
                struct stat st {};
                if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
                if (S_ISDIR(st.st_mode) && depth < max_depth) {
                    pending.push_back(key.empty() ? name : key + "/" + name);
                } else if (S_ISREG(st.st_mode) && !key.empty() && (name == summary_file || name == report_file)) {
                    const std::string version = std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
                                                std::to_string(st.st_mtim.tv_sec) + "." +
                                                std::to_string(st.st_mtim.tv_nsec);
                    keep(found, {key, name, version, static_cast<std::uint64_t>(st.st_size)});
                }
            }
            ::closedir(d);
            if (found.size() > max_fleet_reports || pending.size() > max_fleet_reports)
                return fail(error_code::bad_value,
                            path_ + " holds more than " + std::to_string(max_fleet_reports) + " reports");
        }
        return listed(found);
    }

    result<std::string> read(const fleet_listed& item, std::size_t max_bytes, unsigned) override {
        const std::string name = item.key + "/" + item.file;
        unique_fd fd = open_beneath(name, O_RDONLY | O_NONBLOCK);
        if (!fd) return fail(error_code::io, "cannot open " + path_ + "/" + name + ": " + std::strerror(errno));
        struct stat st {};
        if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
            return fail(error_code::bad_value, path_ + "/" + name + " is not a regular file");
        if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
            return fail(error_code::bad_value,
                        path_ + "/" + name + " is longer than " + std::to_string(max_bytes) + " bytes");
        auto bytes = read_to_end(fd.get(), max_bytes);
        if (!bytes) return fail(error_code::io, "cannot read " + path_ + "/" + name + ": " + std::strerror(errno));
        return std::move(*bytes);
    }

    unsigned readers() const override { return readers_; }

    std::string describe() const override { return path_; }

    std::string page_link(const std::string& key, const std::string& base) const override {
        return (base.empty() ? "file://" + s3_encode_key(path_) + "/" : base) + s3_encode_key(key) + "/report.html";
    }

private:
    // name (relative) opened beneath the root, through no link at all.
    unique_fd open_beneath(const std::string& name, int flags) const {
        open_how how{};
        how.flags = static_cast<std::uint64_t>(flags) | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC;
        how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
        return unique_fd(static_cast<int>(::syscall(SYS_openat2, root_.get(), name.c_str(), &how, sizeof how)));
    }

    unique_fd root_;
    std::string path_;
    unsigned readers_;
};

}  // namespace

std::unique_ptr<fleet_source> bucket_source(const s3_target& target, std::string prefix, unsigned connections) {
    return std::make_unique<bucket>(target, std::move(prefix), connections);
}

result<std::unique_ptr<fleet_source>> directory_source(const std::string& dir, unsigned readers) {
    unique_fd root(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOCTTY | O_CLOEXEC));
    if (!root) return fail(error_code::io, "cannot open the directory " + dir + ": " + std::strerror(errno));
    // Absolute, so that the page's file:// links lead there from wherever the page is opened.
    std::error_code ec;
    std::string path = std::filesystem::absolute(dir, ec).lexically_normal().string();
    if (ec) path = dir;
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    return std::make_unique<directory>(std::move(root), std::move(path), readers);
}

}  // namespace heapd::daemon
