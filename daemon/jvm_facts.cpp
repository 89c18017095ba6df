#include "jvm_facts.h"

#include <unistd.h>

#include "formats/hsperfdata.h"
#include "formats/mapped_file.h"

namespace heapd::daemon {

jvm_facts read_jvm_facts(const attach::discovered_jvm& jvm) {
    jvm_facts f{jvm, std::nullopt, {}};
    auto fd = attach::open_perfdata(jvm);
    if (!fd) {
        f.problem = fd.error().message;
        return f;
    }
    auto mapped = mapped_file::from_fd(*fd, jvm.perfdata_path);
    ::close(*fd);
    if (!mapped) {
        f.problem = mapped.error().describe();
        return f;
    }
    auto data = hsperf_data::parse(mapped->bytes());
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
