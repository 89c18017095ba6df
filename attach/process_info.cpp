#include "attach/process_info.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "base/fd_io.h"

namespace heapd::attach {
namespace {

// The value of a "Key:\tvalue" line of /proc/PID/status, without leading blanks.
std::string field_value(const std::string& line, std::size_t key_length) {
    std::size_t i = key_length;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    return line.substr(i);
}

// The second number of a "Uid:" or "Gid:" line (real, effective, saved, filesystem).
std::optional<unsigned long> effective_id(const std::string& value) {
    std::istringstream in(value);
    unsigned long real = 0, effective = 0;
    if (!(in >> real >> effective)) return std::nullopt;
    return effective;
}

// The fields of /proc/PID/stat from field 3 (the state) on; the command name before them is in
// parentheses and may hold spaces or parentheses itself, so fields are counted from the last ')'.
std::vector<std::string> stat_fields(pid_t pid) {
    // Read with read(2), whose failure is an answer: a process reaped between the open and the read
    // fails the read with ESRCH, which a stream's buffer would throw through an iterator.
    const std::string text = read_small_file(proc_path(pid, "stat"), 4096).value_or("");
    std::size_t close = text.rfind(')');
    if (close == std::string::npos) return {};
    std::istringstream fields(text.substr(close + 1));
    std::vector<std::string> out;
    for (std::string field; fields >> field;) out.push_back(std::move(field));
    return out;
}

// Field n (counted as proc(5) does) of stat_fields' answer, "" when there are fewer.
const std::string& stat_field(const std::vector<std::string>& fields, std::size_t n) {
    static const std::string none;
    return n >= 3 && n - 3 < fields.size() ? fields[n - 3] : none;
}

// Fills start_time (field 22) and state (field 3) from /proc/PID/stat.
bool read_stat(pid_t pid, process_info& info) {
    const auto fields = stat_fields(pid);
    if (stat_field(fields, 22).empty()) return false;
    info.state = stat_field(fields, 3)[0];
    info.start_time = std::strtoull(stat_field(fields, 22).c_str(), nullptr, 10);
    return true;
}

}  // namespace

std::string proc_path(pid_t pid, std::string_view leaf) {
    std::string path = "/proc/" + std::to_string(pid);
    if (!leaf.empty()) (path += '/') += leaf;
    return path;
}

bool process_info::handles_sigquit() const {
    constexpr std::uint64_t sigquit_bit = 1ull << (3 - 1);
    return (sig_caught & sigquit_bit) != 0 && (sig_ignored & sigquit_bit) == 0;
}

result<process_info> read_process_info(pid_t pid) {
    if (pid <= 0) return fail(error_code::no_such_process, "invalid pid " + std::to_string(pid));
    std::ifstream in(proc_path(pid, "status"));
    if (!in) {
        int e = errno;
        if (e == ENOENT || e == ESRCH || e == 0)
            return fail(error_code::no_such_process, "no process " + std::to_string(pid));
        return fail(error_code::io, proc_path(pid, "status") + ": " + std::strerror(e));
    }
    process_info info;
    info.pid = pid;
    bool have_uid = false, have_gid = false;
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with("Name:")) {
            info.name = field_value(line, 5);
        } else if (line.starts_with("Uid:")) {
            if (auto id = effective_id(field_value(line, 4))) info.euid = static_cast<uid_t>(*id), have_uid = true;
        } else if (line.starts_with("Gid:")) {
            if (auto id = effective_id(field_value(line, 4))) info.egid = static_cast<gid_t>(*id), have_gid = true;
        } else if (line.starts_with("NSpid:")) {
            std::istringstream ids(field_value(line, 6));
            for (long id; ids >> id;) info.ns_pid = static_cast<pid_t>(id);
        } else if (line.starts_with("SigCgt:")) {
            info.sig_caught = std::strtoull(field_value(line, 7).c_str(), nullptr, 16);
        } else if (line.starts_with("SigIgn:")) {
            info.sig_ignored = std::strtoull(field_value(line, 7).c_str(), nullptr, 16);
        }
    }
    if (!have_uid || !have_gid) return fail(error_code::no_such_process, "no process " + std::to_string(pid));
    if (info.ns_pid <= 0) info.ns_pid = pid;  // kernels before 4.1 have no NSpid
    if (!read_stat(pid, info)) return fail(error_code::no_such_process, "no process " + std::to_string(pid));
    if (info.state == 'Z' || info.state == 'X')
        return fail(error_code::no_such_process, "process " + std::to_string(pid) + " has exited (zombie)");
    return info;
}

std::optional<bool> maps_libjvm(pid_t pid) {
    std::ifstream in(proc_path(pid, "maps"));
    if (!in) return std::nullopt;
    bool any = false;
    for (std::string line; std::getline(in, line);) {
        any = true;
        if (line.ends_with("/libjvm.so")) return true;
    }
    // Unreadable maps (another user's process) read as empty rather than failing to open.
    if (!any) return std::nullopt;
    return false;
}

bool same_filesystem_view(pid_t pid) {
    struct stat ours {
    }, theirs{};
    if (::stat("/proc/self/ns/mnt", &ours) != 0 || ::stat(proc_path(pid, "ns/mnt").c_str(), &theirs) != 0) return false;
    if (ours.st_ino != theirs.st_ino || ours.st_dev != theirs.st_dev) return false;
    if (::stat("/", &ours) != 0 || ::stat(proc_path(pid, "root").c_str(), &theirs) != 0) return false;
    return ours.st_ino == theirs.st_ino && ours.st_dev == theirs.st_dev;
}

std::optional<int> zombie_wait_status(pid_t pid, std::uint64_t start_time) {
    if (pid <= 0) return std::nullopt;
    const auto fields = stat_fields(pid);
    const std::string& code = stat_field(fields, 52);
    if (code.empty() || stat_field(fields, 3) != "Z" ||
        std::strtoull(stat_field(fields, 22).c_str(), nullptr, 10) != start_time)
        return std::nullopt;
    return static_cast<int>(std::strtol(code.c_str(), nullptr, 10));
}

}  // namespace heapd::attach
