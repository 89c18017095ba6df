#include "daemon/jobs/staging_journal.h"

#include <unistd.h>

#include <filesystem>

#include "formats/wire/protocol.h"

namespace heapd::daemon {

result<void> staging_journal::note(std::uint64_t job, const attach::staged_dump& staged) const {
    wire::json j = {
        {"pid", staged.pid}, {"start_time", staged.start_time}, {"host_tmp", staged.host_tmp}, {"name", staged.name}};
    return write_file_atomic(path_of(job), j.dump(), access_);
}

void staging_journal::done(std::uint64_t job) const { ::unlink(path_of(job).c_str()); }

std::vector<std::string> staging_journal::clean_up() const {
    std::vector<std::string> removed;
    std::error_code ec;
    std::vector<std::filesystem::path> notes;
    for (const auto& e : std::filesystem::directory_iterator(dir_, ec)) notes.push_back(e.path());
    for (const auto& p : notes) {
        auto text = read_file(p, 4096);
        auto j = text ? wire::json::parse(*text, nullptr, false) : wire::json();
        if (j.is_object()) {
            attach::staged_dump s;
            s.pid = j.value("pid", 0);
            s.start_time = j.value("start_time", std::uint64_t{0});
            s.host_tmp = j.value("host_tmp", false);
            s.name = j.value("name", std::string());
            if (s.pid > 0 && attach::remove_staged_dump(s)) removed.push_back(s.name);
        }
        std::filesystem::remove(p, ec);
    }
    return removed;
}

}  // namespace heapd::daemon
