#include "daemon/jobs/analyze_job.h"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <memory>
#include <utility>

#include "daemon/jobs/analysis_child.h"
#include "formats/report/quantities.h"
#include "formats/report/report_json.h"

namespace heapd::daemon {
namespace {

// Phases in order with their share of an analysis's time, as measured on the 625 MB dump of
// bench/BigHeap.java (2.3 to 3.7 s in all, the waste report beside the dominators: index and census
// 0.5 s, object graph 0.9, threads 0.02, dominators with the waste walks 1.3, suspects and the
// report 0.3), rounded, with a little for the waste report, which runs on its own where memory is
// short; opening and saving are quick.
constexpr std::array<std::pair<std::string_view, double>, 9> phase_shares{{{"open", 0.01},
                                                                           {"index", 0.11},
                                                                           {"census", 0.13},
                                                                           {"object graph", 0.25},
                                                                           {"threads", 0.01},
                                                                           {"waste", 0.05},
                                                                           {"dominators", 0.33},
                                                                           {"suspects", 0.10},
                                                                           {"save", 0.01}}};

// A compressed dump inflates to about this many times its size (HPROF compresses 3 to 6 times).
constexpr std::uint64_t inflate_estimate = 4;

std::unexpected<error_info> cancelled() { return fail(error_code::cancelled, "cancelled"); }

bool starts_gzip(int fd) {
    unsigned char magic[2] = {0, 0};
    return ::pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

}  // namespace

double analysis_share_before(std::string_view phase) {
    double share = 0;
    for (const auto& [name, s] : phase_shares) {
        if (name == phase) return share;
        share += s;
    }
    return share;
}

double analysis_share_of(std::string_view phase) {
    for (const auto& [name, s] : phase_shares)
        if (name == phase) return s;
    return 0;
}

std::string report_headline(const analysis_report& r) {
    if (!r.retention.leak_suspects.empty()) {
        const leak_suspect& s = r.retention.leak_suspects.front();
        char share[32];
        std::snprintf(share, sizeof share, "%.1f%%", 100 * s.share);
        std::string head = "leak suspect: " + text::human_bytes(s.retained_bytes) + " (" + share + ") ";
        if (s.is_class) return head + "in " + text::grouped(s.instances) + " instances of " + s.suspect.class_name;
        if (s.accumulated.empty()) return head + "retained by " + s.suspect.class_name;
        const accumulated_class& most = s.accumulated.front();
        return head + "in " + text::grouped(most.count) + " " + most.class_name + ", held by " + s.suspect.class_name;
    }
    std::uint64_t objects = r.summary.instances + r.summary.object_arrays + r.summary.primitive_arrays;
    return "no leak suspect; heap " + text::human_bytes(r.summary.shallow_bytes) + " in " + text::grouped(objects) +
           " objects";
}

result<analyzed_report> analyze_for_job(job_context& ctx, store& s, int dump_fd, const std::string& name,
                                        std::uint64_t& total, const std::string& executable) {
    child_watch watch;
    watch.total = [&](std::uint64_t bytes) { total = bytes; };
    std::string current;  // the phase the child is in
    watch.phase = [&](std::string_view phase) {
        current = std::string(phase);
        ctx.progress(phase, static_cast<std::uint64_t>(analysis_share_before(phase) * static_cast<double>(total)),
                     total);
    };
    watch.within = [&](double done) {
        const double whole = analysis_share_before(current) + done * analysis_share_of(current);
        ctx.progress(current, static_cast<std::uint64_t>(whole * static_cast<double>(total)), total);
    };
    watch.cancelled = [&] { return ctx.cancelled(); };
    auto text =
        analyze_in_child(dump_fd, name, {s.tmp_dir(), s.space_left().value_or(0), s.reserve()}, watch, executable);
    if (!text) return std::unexpected(text.error());
    auto parsed = wire::json::parse(*text, nullptr, false);
    auto report = parsed.is_discarded() ? result<analysis_report>(fail(error_code::bad_value, "not JSON"))
                                        : report_from_json(parsed);
    if (!report)
        return fail(error_code::internal, "the analysis gave a report that does not read: " + report.error().message);
    return analyzed_report{std::move(*text), std::move(*report)};
}

job_work make_analyze_work(store& s, analyze_request request) {
    auto req = std::make_shared<analyze_request>(std::move(request));
    return [&s, req](job_context& ctx) -> job_outcome {
        struct stat st {};
        if (::fstat(req->fd.get(), &st) != 0) return fail_errno("cannot stat", req->name);
        const auto file_bytes = static_cast<std::uint64_t>(st.st_size);
        std::uint64_t total = file_bytes;
        ctx.progress("open", 0, total);
        if (ctx.cancelled()) return cancelled();
        if (starts_gzip(req->fd.get()))
            if (auto room = s.ensure_space(file_bytes * inflate_estimate, "the inflated copy of " + req->name); !room)
                return std::unexpected(room.error());

        // The analysis itself runs in a child process (analysis_child.h).
        auto analyzed = analyze_for_job(ctx, s, req->fd.get(), req->name, total, req->executable);
        req->fd.reset();
        if (!analyzed) return std::unexpected(analyzed.error());
        const std::string& text = analyzed->json;
        if (ctx.cancelled()) return cancelled();

        ctx.progress("save", static_cast<std::uint64_t>(analysis_share_before("save") * static_cast<double>(total)),
                     total);
        if (auto room = s.ensure_space(text.size(), "the report of " + req->name); !room)
            return std::unexpected(room.error());
        entry_metadata meta;
        meta.created_ms = now_ms();
        meta.owner_uid = req->uid;
        meta.owner_gid = req->gid;
        meta.trigger = req->trigger;
        meta.source = "file";
        meta.file = req->name;
        meta.file_bytes = file_bytes;
        meta.host = req->host;
        meta.job = ctx.id();
        meta.headline = report_headline(analyzed->report);
        auto staged = s.stage(meta);
        if (!staged) return std::unexpected(staged.error());
        if (auto w = staged->write("report.json", text); !w) return std::unexpected(w.error());
        auto committed = staged->commit();
        if (!committed) return std::unexpected(committed.error());
        s.report_committed(*committed, analyzed->report);
        ctx.progress("save", total, total);
        return committed->id;
    };
}

}  // namespace heapd::daemon
