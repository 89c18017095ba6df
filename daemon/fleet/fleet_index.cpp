#include "daemon/fleet/fleet_index.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/atomic_file.h"
#include "base/fd_io.h"
#include "base/unique_fd.h"

namespace heapd::daemon {
namespace {

using json = nlohmann::ordered_json;

constexpr std::size_t max_index_bytes = std::size_t{1} << 30;

}  // namespace

result<fleet_index> load_fleet_index(const std::string& path, const std::string& source) {
    fleet_index index;
    index.source = source;
    unique_fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC));
    if (!fd) {
        if (errno == ENOENT) return index;
        return fail(error_code::io, "cannot open the index " + path + ": " + std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
        return fail(error_code::bad_value, "the index " + path + " is not a regular file");
    auto text = read_to_end(fd.get(), max_index_bytes + 1);
    if (!text) return fail(error_code::io, "cannot read the index " + path + ": " + std::strerror(errno));
    if (text->size() > max_index_bytes) return fail(error_code::bad_value, "the index " + path + " is over 1 GiB");
    const json j = json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || j.value("fleet_index", 0) != 1 || !j.contains("reports") ||
        !j.at("reports").is_array())
        return fail(error_code::corrupt, "the index " + path + " is not one heapd fleet wrote");
    if (j.value("source", "") != source) return index;  // another source's: start afresh
    for (const json& r : j.at("reports")) {
        if (!r.is_object() || !r.contains("entry"))
            return fail(error_code::corrupt, "the index " + path + " is damaged");
        auto entry = fleet_entry_from_json(r.at("entry"));
        if (!entry) return fail(error_code::corrupt, "the index " + path + " is damaged: " + entry.error().message);
        fleet_index_item item{r.value("file", ""), r.value("version", ""), std::move(*entry)};
        const std::string key = item.entry.key;
        index.items.insert_or_assign(key, std::move(item));
    }
    return index;
}

result<void> save_fleet_index(const std::string& path, const fleet_index& index) {
    json reports = json::array();
    for (const auto& [key, item] : index.items)
        reports.push_back({{"file", item.file}, {"version", item.version}, {"entry", to_json(item.entry)}});
    const json j = {{"fleet_index", 1}, {"source", index.source}, {"reports", reports}};
    const file_access access{0600, 0700, 0, false};
    // A folder the user named is theirs (--index /tmp/x.json): made when missing, never changed.
    std::error_code ec;
    if (!std::filesystem::is_directory(parent_of(path), ec))
        if (auto made = make_dir(parent_of(path), access); !made) return made;
    return write_file_atomic(path, j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n", access);
}

}  // namespace heapd::daemon
