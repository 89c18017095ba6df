#pragma once
// The analysis job: a dump that a client opened with its own rights and passed as a descriptor is
// analyzed in place (never copied into the store), and its report kept as a store entry.
#include <sys/types.h>

#include <string>
#include <string_view>

#include "base/unique_fd.h"
#include "daemon/jobs/job_manager.h"
#include "daemon/store/store.h"

namespace heapd::daemon {

// What to analyze and for whom.
struct analyze_request {
    unique_fd fd;      // open for reading, a regular file
    std::string name;  // the file as the client named it, for people
    uid_t uid = 0;     // the entry's owner
    gid_t gid = 0;
    std::string trigger = "heapctl report";
    std::string host;                           // this host's name, recorded with the entry
    std::string executable = "/proc/self/exe";  // the heapd that runs the analysis process
};

// The work of one analysis: after the free-space guard (for a gzip dump, inflated into the store's
// scratch directory), analyze with every phase of `heapd analyze` in a child process
// (analysis_child.h; cancelling kills it), check the report reads back, and keep it, whole (the
// whole histogram, 100 of each top list), as a store entry.
job_work make_analyze_work(store& s, analyze_request request);

// A report as the analysis process gave it: its JSON text, kept in the store as it is, and the
// model read back from it.
struct analyzed_report {
    std::string json;
    analysis_report report;
};

// Runs the analysis of dump_fd in a child process (analysis_child.h) for the job of ctx: the
// child's phases become the job's progress out of total bytes (raised to the inflated size of a
// compressed dump), cancelling the job kills it, and its report must read back.
result<analyzed_report> analyze_for_job(job_context& ctx, store& s, int dump_fd, const std::string& name,
                                        std::uint64_t& total, const std::string& executable);

// How far an analysis is when phase starts, as a share of its usual time (0 to 1), for progress
// in bytes: done = share × the dump's size.
double analysis_share_before(std::string_view phase);
// The share of an analysis's usual time that phase takes (0 for a phase it does not know).
double analysis_share_of(std::string_view phase);

// One line on what fills the heap: the top leak suspect, or the heap's size when there is none.
std::string report_headline(const analysis_report& r);

}  // namespace heapd::daemon
