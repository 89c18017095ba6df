// The server's part in a JVM's death: what the death watcher found is counted, then kept, logged and
// journalled at a rate per owner (death_watcher.h says how a death is seen, death_rate.h the rate).
#include "daemon/deaths/death_store.h"
#include "daemon/events/death_event.h"
#include "daemon/runtime/log_text.h"
#include "daemon/server/server.h"

namespace heapd::daemon {

void server::jvm_died(death_record r) {
    const death_cause cause = r.verdict.cause;
    counters_->jvm_died(death_cause_name(cause));
    // Counted, always; recorded, logged and journalled at a rate per owner other than root (death_rate.h):
    // no other user can make root's JVMs die, and a container's JVMs mostly run as root, where a
    // rollout or a node running out of memory ends dozens at once.
    for (const death_rate::held_back& h : death_rate_.take_held_back(r.died_ms))
        log_->warn(
            "deaths: {} more JVM deaths of uid {} were counted but not recorded, logged or journalled: one user's "
            "are taken 30 at once, then one every 2 s",
            h.count, h.owner);
    if (r.uid != 0 && !death_rate_.admit(r.uid, r.died_ms)) return;
    std::string entry_id;
    if (worth_keeping(cause)) {
        if (auto kept = death_log_->keep(*store_, r))
            entry_id = *kept;
        else
            log_->error("deaths: pid {}: cannot keep its record: {}", r.pid, kept.error().message);
    }
    const std::string who =
        "JVM " + std::to_string(r.pid) + (r.main_class.empty() ? "" : " (" + bounded_text(r.main_class) + ")");
    const std::string line = who + " " + bounded_text(death_headline(r)) + ": " + bounded_text(r.verdict.evidence) +
                             (entry_id.empty() ? "" : "; recorded as " + entry_id) +
                             (r.kept.empty() ? "" : ", its last dump " + r.kept.front());
    if (cause == death_cause::oom_kill || cause == death_cause::crashed)
        log_->warn("{}", line);
    else
        log_->info("{}", line);
    if (worth_keeping(cause)) send_journal_fields(journal_fields(r, entry_id));
}

}  // namespace heapd::daemon
