#include "daemon/stacks/proc_files.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "attach/process_info.h"
#include "base/fd_io.h"

namespace heapd::daemon {

std::vector<pid_t> list_tasks(pid_t pid) {
    std::vector<pid_t> out;
    std::string dir = attach::proc_path(pid, "task");
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return out;
    while (dirent* e = ::readdir(d)) {
        char* end = nullptr;
        long tid = std::strtol(e->d_name, &end, 10);
        if (end != e->d_name && *end == '\0' && tid > 0) out.push_back(static_cast<pid_t>(tid));
    }
    ::closedir(d);
    std::sort(out.begin(), out.end());
    return out;
}

char thread_state(pid_t pid, pid_t tid) {
    auto stat = read_small_file(attach::proc_path(pid, "task/") + std::to_string(tid) + "/stat", max_proc_file_bytes);
    if (!stat) return '\0';
    // "tid (comm) S ...": comm may itself hold ')' and spaces, so look after the last ')'.
    auto close = stat->rfind(')');
    if (close == std::string::npos || close + 2 >= stat->size()) return '\0';
    return (*stat)[close + 2];
}

std::string thread_name(pid_t pid, pid_t tid) {
    auto comm = read_small_file(attach::proc_path(pid, "task/") + std::to_string(tid) + "/comm", max_proc_file_bytes);
    if (!comm) return {};
    if (!comm->empty() && comm->back() == '\n') comm->pop_back();
    return *comm;
}

std::string status_field(pid_t pid, const std::string& key) {
    auto status = read_small_file(attach::proc_path(pid, "status"), max_proc_file_bytes);
    if (!status) return {};
    std::string prefix = key + ":";
    std::size_t pos = 0;
    while (pos < status->size()) {
        std::size_t eol = status->find('\n', pos);
        if (eol == std::string::npos) eol = status->size();
        if (status->compare(pos, prefix.size(), prefix) == 0) {
            std::size_t b = pos + prefix.size();
            while (b < eol && ((*status)[b] == ' ' || (*status)[b] == '\t')) ++b;
            std::size_t e = eol;
            while (e > b && ((*status)[e - 1] == ' ' || (*status)[e - 1] == '\t')) --e;
            return status->substr(b, e - b);
        }
        pos = eol + 1;
    }
    return {};
}

pid_t namespace_pid(pid_t pid) {
    std::string nspid = status_field(pid, "NSpid");
    auto last = nspid.find_last_of(" \t");
    std::string tail = last == std::string::npos ? nspid : nspid.substr(last + 1);
    long v = std::strtol(tail.c_str(), nullptr, 10);
    return v > 0 ? static_cast<pid_t>(v) : pid;
}

}  // namespace heapd::daemon
