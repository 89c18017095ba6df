#include "daemon/jobs/path_job.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cstdio>
#include <memory>

#include "base/unique_fd.h"
#include "daemon/jobs/analysis_child.h"

namespace heapd::daemon {

std::string path_file_name(std::uint64_t object, unsigned roots) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "paths-%llx-%u.json", static_cast<unsigned long long>(object), roots);
    return buf;
}

job_work make_path_work(store& s, path_request request) {
    auto req = std::make_shared<path_request>(std::move(request));
    return [&s, req](job_context& ctx) -> job_outcome {
        auto path = s.dump_path(req->entry);
        if (!path) return fail(error_code::not_found, path.error().message);
        unique_fd fd(::open(path->c_str(), O_RDONLY | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW));
        struct stat st {};
        if (!fd || ::fstat(fd.get(), &st) != 0)
            return fail(error_code::not_found, "the dump of " + req->entry + " is gone");
        std::uint64_t total = static_cast<std::uint64_t>(st.st_size);
        ctx.progress("paths", 0, total);
        child_watch watch;
        watch.total = [&](std::uint64_t bytes) { total = bytes; };
        watch.cancelled = [&] { return ctx.cancelled(); };
        auto text =
            paths_in_child(fd.get(), "dump " + req->entry, {s.tmp_dir(), s.space_left().value_or(0), s.reserve()},
                           req->object, req->roots, watch, req->executable);
        if (!text) return std::unexpected(text.error());
        if (auto kept = s.put_file(req->entry, path_file_name(req->object, req->roots), *text); !kept)
            return std::unexpected(kept.error());
        ctx.progress("paths", total, total);
        return req->entry;
    };
}

}  // namespace heapd::daemon
