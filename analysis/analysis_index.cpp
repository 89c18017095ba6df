#include "analysis/analysis_index.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <sstream>

#include "base/atomic_file.h"
#include "base/unique_fd.h"
#include "formats/report/report_json.h"

namespace heapd {
inline namespace analysis {
namespace {

// 2: problems kept up to 100, the rest counted (problems_omitted); 3: the dominator tree outline;
// 4: the off-heap part (direct buffers, thread groups, class loaders) and thread ids
constexpr int index_version = 4;
constexpr std::size_t edge_bytes = 64 * 1024;

// FNV-1a, 64-bit.
std::uint64_t fnv1a(const unsigned char* p, std::size_t n, std::uint64_t h) {
    for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

}  // namespace

result<dump_identity> identify_dump(const std::string& path) {
    unique_fd f(::open(path.c_str(), O_RDONLY | O_NOCTTY | O_CLOEXEC));
    struct stat st {};
    if (!f || ::fstat(f.get(), &st) != 0) return fail(error_code::io, "cannot read " + path);
    dump_identity id;
    id.size = static_cast<std::uint64_t>(st.st_size);
    id.mtime_ns = std::int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
    std::uint64_t h = 0xcbf29ce484222325ULL;
    std::array<unsigned char, edge_bytes> buf;
    for (std::uint64_t at : {std::uint64_t{0}, id.size > edge_bytes ? id.size - edge_bytes : 0}) {
        ssize_t n = ::pread(f.get(), buf.data(), buf.size(), static_cast<off_t>(at));
        if (n < 0) return fail(error_code::io, "cannot read " + path);
        h = fnv1a(buf.data(), static_cast<std::size_t>(n), h);
    }
    id.edge_hash = h;
    return id;
}

std::string index_path(const std::string& dump_path, const std::string& dir) {
    if (dir.empty()) return dump_path + ".heapd-index";
    std::size_t slash = dump_path.rfind('/');
    return dir + "/" + (slash == std::string::npos ? dump_path : dump_path.substr(slash + 1)) + ".heapd-index";
}

std::string index_options_key(const analysis_options& o) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "largest=%u classes=%d threads=%d retained=%d waste=%d suspects=%.6f dump=%u tree=%zu/%.6f/%zu",
                  o.largest, o.all_retained_classes ? 1 : 0, o.threads ? 1 : 0, o.retained ? 1 : 0, o.waste ? 1 : 0,
                  o.suspect_threshold, o.dump, o.tree.max_nodes, o.tree.min_share, o.tree.others_classes);
    // The heap only where one is named, so that indexes written before it stay valid. The name
    // comes from a user and is only compared, never parsed back.
    return o.heap.empty() ? std::string(buf) : std::string(buf) + " heap=" + o.heap;
}

std::optional<analysis_report> load_index(const std::string& index_file, const dump_identity& dump,
                                          const std::string& options_key) {
    unique_fd fd(::open(index_file.c_str(), O_RDONLY | O_NOCTTY | O_CLOEXEC));
    std::FILE* in = fd ? ::fdopen(fd.get(), "r") : nullptr;
    if (in == nullptr) return std::nullopt;
    fd.release();  // the stream owns it now
    auto j = nlohmann::ordered_json::parse(in, nullptr, false);
    std::fclose(in);
    if (j.is_discarded() || !j.is_object()) return std::nullopt;
    try {
        if (j.at("version").get<int>() != index_version) return std::nullopt;
        const auto& d = j.at("dump");
        dump_identity seen{d.at("size").get<std::uint64_t>(), d.at("mtime_ns").get<std::int64_t>(),
                           d.at("edge_hash").get<std::uint64_t>()};
        if (!(seen == dump) || j.at("options").get<std::string>() != options_key) return std::nullopt;
        auto report = report_from_json(j.at("report"));
        if (!report) return std::nullopt;
        return std::move(*report);
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;
    }
}

result<void> save_index(const std::string& index_file, const dump_identity& dump, const std::string& options_key,
                        const analysis_report& report) {
    nlohmann::ordered_json j = {
        {"version", index_version},
        {"dump", {{"size", dump.size}, {"mtime_ns", dump.mtime_ns}, {"edge_hash", dump.edge_hash}}},
        {"options", options_key},
        {"report", to_json(report)}};
    std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    // 0600: the report names what the heap holds, as private as the dump.
    auto file = atomic_file::create(index_file, 0600);
    if (!file) return std::unexpected(file.error());
    if (auto written = file->write(text); !written) return written;
    return file->commit();
}

}  // namespace analysis
}  // namespace heapd
