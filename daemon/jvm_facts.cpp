#include "jvm_facts.h"

#include <sys/stat.h>
#include <unistd.h>

#include <optional>
#include <vector>

#include "formats/hsperfdata.h"

namespace heapd::daemon {

namespace {

// The whole file read into memory. The daemon copies hsperfdata files (tens of KiB) instead of
// mapping them: a file its owner truncated under a mapping would kill the daemon with SIGBUS.
std::optional<std::vector<std::byte>> read_small_file(int fd) {
    constexpr std::size_t limit = 64 << 20;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || st.st_size < 0 || static_cast<std::size_t>(st.st_size) > limit) return std::nullopt;
    std::vector<std::byte> bytes(static_cast<std::size_t>(st.st_size));
    std::size_t done = 0;
    while (done < bytes.size()) {
        ssize_t n = ::pread(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
    }
    bytes.resize(done);
    return bytes;
}

} // namespace

jvm_facts read_jvm_facts(const attach::discovered_jvm& jvm) {
    jvm_facts f{jvm, std::nullopt, {}};
    auto fd = attach::open_perfdata(jvm);
    if (!fd) {
        f.problem = fd.error().message;
        f.gone = fd.error().code == attach::attach_code::no_such_process;
        return f;
    }
    auto bytes = read_small_file(*fd);
    ::close(*fd);
    if (!bytes) {
        f.problem = jvm.perfdata_path + ": cannot read it";
        return f;
    }
    auto data = hsperf_data::parse(*bytes);
    auto s = data ? summarize(*data) : std::unexpected(data.error());
    if (s) f.summary = std::move(*s);
    else f.problem = jvm.perfdata_path + ": " + s.error().describe();
    return f;
}

attach::attach_result<jvm_facts> find_jvm_facts(pid_t pid) {
    auto jvm = attach::find_jvm(pid);
    if (!jvm) return std::unexpected(jvm.error());
    return read_jvm_facts(*jvm);
}

wire::json to_json(const jvm_facts& f) {
    wire::json j = {{"pid", f.jvm.pid},
                    {"uid", f.jvm.uid},
                    {"user", f.jvm.user},
                    {"in_container", f.jvm.in_container}};
    if (!f.summary) {
        j["problem"] = f.problem;
        return j;
    }
    const jvm_perf_summary& s = *f.summary;
    j["main_class"] = s.main_class;
    j["command"] = s.command;
    j["vm_version"] = s.vm_version;
    j["heap"] = {{"used", s.heap.used}, {"capacity", s.heap.capacity}, {"max", s.heap.max_capacity}};
    j["oom"] = {{"heap_dump", s.oom.heap_dump},
                {"heap_dump_path", s.oom.heap_dump_path},
                {"on_error", s.oom.on_error},
                {"exit", s.oom.exit}};
    return j;
}

} // namespace heapd::daemon
