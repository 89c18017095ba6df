#include "daemon/jobs/job_manager.h"
#include "formats/wire/error_kinds.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include <boost/asio/post.hpp>

#include "daemon/runtime/crash_handler.h"
#include "daemon/runtime/log_text.h"
#include "formats/report/quantities.h"

namespace heapd::daemon {
namespace {

constexpr std::size_t max_history = 200;  // final jobs remembered, in memory and in the store
// Jobs waiting outside at once, each on a thread of its own; past this a job waits holding its share.
constexpr unsigned max_outside = 64;

// "pid 1234" for the JVM, or "pid 1234 (client)" when the job concerns no JVM.
std::string pid_text(const job_record& r) {
    if (r.jvm_pid != 0) return "pid " + std::to_string(r.jvm_pid);
    return "pid " + std::to_string(r.client_pid) + " (client)";
}

}  // namespace

void job_context::progress(std::string_view phase, std::uint64_t done, std::uint64_t total) {
    manager_->progress(id_, phase, done, total);
}

job_context::outside_wait::outside_wait(job_context* ctx) : ctx_(ctx) { ctx_->manager_->step_outside(ctx_->id_); }

job_context::outside_wait::~outside_wait() { ctx_->manager_->come_back(ctx_->id_); }

job_manager::job_manager(boost::asio::io_context& io, store& s, unsigned workers, std::shared_ptr<spdlog::logger> log)
    : io_(io), store_(s), log_(std::move(log)), workers_(std::max(workers, 1u)), per_owner_(std::max(workers_, 2u)) {
    for (unsigned i = 0; i < workers_; ++i) threads_.emplace_back([this] { run_worker(); });
}

job_manager::~job_manager() { shutdown(std::chrono::hours(24)); }

void job_manager::restore(const std::vector<job_record>& history) {
    std::lock_guard lock(mu_);
    for (const job_record& r : history) {
        auto s = std::make_shared<slot>();
        s->record = r;
        jobs_[r.id] = s;
        next_id_ = std::max(next_id_, r.id + 1);
    }
}

job_record job_manager::submit(job_record spec, job_work work, job_listener listener) {
    auto s = std::make_shared<slot>();
    {
        std::lock_guard lock(mu_);
        spec.id = next_id_++;
        spec.state = stopping_ ? job_state::cancelled : job_state::queued;
        spec.created_ms = now_ms();
        if (stopping_) {
            spec.error = std::string(stopped_prefix) + "is stopping";
            spec.error_kind = "cancelled";
            spec.finished_ms = spec.created_ms;
        }
        s->record = spec;
        s->work = std::move(work);
        s->listener = std::move(listener);
        jobs_[spec.id] = s;
        if (!stopping_) queue_.push_back(s);
        add_thread_if_needed();  // every thread may be with a job that waits outside
    }
    changed(s, true);
    wake_.notify_one();
    return spec;
}

std::vector<job_record> job_manager::list() const {
    std::vector<job_record> out;
    std::lock_guard lock(mu_);
    for (auto it = jobs_.rbegin(); it != jobs_.rend(); ++it) out.push_back(it->second->record);
    return out;
}

std::optional<job_record> job_manager::find(std::uint64_t id) const {
    std::lock_guard lock(mu_);
    auto it = jobs_.find(id);
    if (it == jobs_.end()) return std::nullopt;
    return it->second->record;
}

std::optional<job_record> job_manager::cancel(std::uint64_t id) {
    std::shared_ptr<slot> s;
    bool was_queued = false;
    {
        std::lock_guard lock(mu_);
        auto it = jobs_.find(id);
        if (it == jobs_.end()) return std::nullopt;
        s = it->second;
        if (s->record.state == job_state::queued) {
            queue_.erase(std::remove(queue_.begin(), queue_.end(), s), queue_.end());
            s->record.state = job_state::cancelled;
            s->record.error = "cancelled before it started";
            s->record.error_kind = "cancelled";
            s->record.finished_ms = now_ms();
            s->work = nullptr;
            was_queued = true;
        } else if (s->record.state == job_state::running) {
            s->cancel_reason = "cancelled on request";
            s->cancel->store(true);
        }
    }
    wake_.notify_all();  // a job coming back from outside ends instead
    if (was_queued) {
        log_->info("job {} {} cancelled while queued", s->record.id, s->record.kind);
        changed(s, true);
    }
    std::lock_guard lock(mu_);
    return s->record;
}

job_manager::counts job_manager::count() const {
    std::lock_guard lock(mu_);
    return {static_cast<unsigned>(queue_.size()), running_};
}

unsigned job_manager::queued_of(uid_t owner) const {
    std::lock_guard lock(mu_);
    return static_cast<unsigned>(
        std::count_if(queue_.begin(), queue_.end(), [&](const auto& s) { return s->record.owner_uid == owner; }));
}

std::deque<std::shared_ptr<job_manager::slot>>::iterator job_manager::next_queued() {
    auto best = queue_.end();
    auto rank = [this](const std::shared_ptr<slot>& s) {
        const uid_t owner = s->record.owner_uid;
        auto r = running_by_owner_.find(owner);
        auto l = last_served_.find(owner);
        return std::pair{r == running_by_owner_.end() ? 0u : r->second, l == last_served_.end() ? 0u : l->second};
    };
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
        if (rank(*it).first >= per_owner_) continue;                     // that owner has its share running
        if (best == queue_.end() || rank(*it) < rank(*best)) best = it;  // strictly less: the oldest of equals stays
    }
    return best;
}

bool job_manager::may_start() {
    return !stopping_ && !queue_.empty() && busy_ + returning_ < workers_ && next_queued() != queue_.end();
}

void job_manager::run_worker() {
    alternate_stack stack;  // so the crash handler can run on this thread even after a stack overflow
    for (;;) {
        std::shared_ptr<slot> s;
        {
            std::unique_lock lock(mu_);
            ++idle_threads_;
            wake_.wait(lock, [this] { return stopping_ || may_start(); });
            --idle_threads_;
            if (stopping_) return;
            auto next = next_queued();
            s = *next;
            queue_.erase(next);
            s->record.state = job_state::running;
            s->record.started_ms = now_ms();
            s->holds_share = true;
            ++busy_;
            ++running_;
            ++running_by_owner_[s->record.owner_uid];
            last_served_[s->record.owner_uid] = ++starts_;
        }
        run_job(s);
    }
}

void job_manager::add_thread_if_needed() {
    if (idle_threads_ == 0 && threads_.size() < workers_ + max_outside && may_start())
        threads_.emplace_back([this] { run_worker(); });
}

void job_manager::step_outside(std::uint64_t id) {
    std::lock_guard lock(mu_);
    auto it = jobs_.find(id);
    if (it == jobs_.end() || !it->second->holds_share) return;
    if (idle_threads_ == 0 && threads_.size() >= workers_ + max_outside) return;  // no thread for another job
    it->second->holds_share = false;
    --busy_;
    // Its thread stays with it: another takes the share.
    add_thread_if_needed();
    wake_.notify_all();
}

void job_manager::come_back(std::uint64_t id) {
    std::unique_lock lock(mu_);
    auto it = jobs_.find(id);
    if (it == jobs_.end() || it->second->holds_share) return;
    const std::shared_ptr<slot> s = it->second;
    ++returning_;
    // A cancelled job takes no share: it only ends.
    wake_.wait(lock, [&] { return stopping_ || busy_ < workers_ || s->cancel->load(); });
    --returning_;
    if (s->cancel->load() && busy_ >= workers_) return;
    ++busy_;
    s->holds_share = true;
}

void job_manager::run_job(const std::shared_ptr<slot>& s) {
    changed(s, true);
    {
        const job_record& r = s->record;  // only this thread changes it now, apart from progress
        log_->info("job {} {} started: {}, trigger \"{}\", {}, {}, uid {}", r.id, r.kind, pid_text(r),
                   bounded_text(r.trigger), bounded_text(r.subject), text::human_bytes(r.subject_bytes), r.owner_uid);
    }
    job_context ctx(this, s->record.id, s->cancel);
    job_outcome outcome;
    try {
        outcome = s->work(ctx);
    } catch (const std::exception& e) {
        outcome = fail(error_code::internal, std::string("internal error: ") + e.what());
    } catch (...) {
        outcome = fail(error_code::internal, "internal error");
    }
    finish(s, outcome);
}

void job_manager::finish(const std::shared_ptr<slot>& s, const job_outcome& outcome) {
    job_record r;
    {
        std::lock_guard lock(mu_);
        job_record& rec = s->record;
        rec.finished_ms = now_ms();
        if (outcome) {
            rec.state = job_state::done;
            rec.entry = *outcome;
        } else if (outcome.error().code == error_code::cancelled) {
            rec.state = job_state::cancelled;
            rec.error = s->cancel_reason;
            rec.error_kind = "cancelled";
        } else {
            rec.state = job_state::failed;
            rec.error = bounded_text(outcome.error().message, max_job_error_bytes);
            rec.error_kind = std::string(wire::error_kind_name(wire::kind_of(outcome.error().code)));
        }
        s->work = nullptr;
        if (s->holds_share) --busy_;
        s->holds_share = false;
        --running_;
        if (auto it = running_by_owner_.find(rec.owner_uid); it != running_by_owner_.end() && --it->second == 0)
            running_by_owner_.erase(it);
        r = rec;
    }
    std::string tail = r.state == job_state::done ? " -> " + r.entry : ": " + bounded_text(r.error);
    log_->info("job {} {} {} after {}: {}, trigger \"{}\", {}, {}{}", r.id, r.kind, job_state_name(r.state),
               text::duration_text(r.duration_ms(r.finished_ms)), pid_text(r), bounded_text(r.trigger),
               bounded_text(r.subject), text::human_bytes(r.subject_bytes), tail);
    changed(s, true);
    if (r.state == job_state::done)
        for (const std::string& id : store_.apply_retention(now_ms())) log_->info("retention: removed dump {}", id);
    forget_old_jobs();
    wake_.notify_all();  // a share is free, and its owner may have room for another job
    idle_.notify_all();
}

void job_manager::progress(std::uint64_t id, std::string_view phase, std::uint64_t done, std::uint64_t total) {
    std::shared_ptr<slot> s;
    {
        std::lock_guard lock(mu_);
        auto it = jobs_.find(id);
        if (it == jobs_.end()) return;
        s = it->second;
        s->record.phase = std::string(phase);
        s->record.done = done;
        s->record.total = total;
    }
    changed(s, false);
}

void job_manager::changed(const std::shared_ptr<slot>& s, bool persist) {
    job_record snapshot;
    job_listener listener;
    std::uint64_t version;
    {
        std::lock_guard lock(mu_);
        snapshot = s->record;
        version = ++s->version;
        listener = s->listener;
        if (snapshot.final()) s->listener = nullptr;  // nothing more to tell
    }
    if (persist) {
        // Two threads may save one job (the io thread queues it, a worker starts it): an older
        // state never overwrites a newer one.
        std::lock_guard lock(s->persist_mu);
        if (version > s->persisted) {
            if (auto saved = store_.save_job(snapshot); !saved)
                log_->warn("job {}: cannot save its record: {}", snapshot.id, saved.error().message);
            s->persisted = version;
        }
    }
    if (observer_) observer_(snapshot);
    if (listener) boost::asio::post(io_, [listener = std::move(listener), snapshot] { listener(snapshot); });
}

void job_manager::forget_old_jobs() {
    std::vector<std::uint64_t> doomed;
    {
        std::lock_guard lock(mu_);
        std::size_t final_jobs = 0;
        for (const auto& [id, s] : jobs_) final_jobs += s->record.final();
        for (auto it = jobs_.begin(); it != jobs_.end() && final_jobs > max_history;) {
            if (it->second->record.final()) {
                doomed.push_back(it->first);
                it = jobs_.erase(it);
                --final_jobs;
            } else {
                ++it;
            }
        }
    }
    for (std::uint64_t id : doomed) store_.forget_job(id);
}

bool job_manager::shutdown(std::chrono::milliseconds grace) {
    std::vector<std::shared_ptr<slot>> dropped;
    {
        std::lock_guard lock(mu_);
        if (stopping_ && threads_.empty()) return true;
        stopping_ = true;
        for (auto& s : queue_) {
            s->record.state = job_state::cancelled;
            s->record.error = std::string(stopped_prefix) + "stopped before it started";
            s->record.error_kind = "cancelled";
            s->record.finished_ms = now_ms();
            s->work = nullptr;
            dropped.push_back(s);
        }
        queue_.clear();
        for (auto& [id, s] : jobs_)
            if (s->record.state == job_state::running) {
                s->cancel_reason = std::string(stopped_prefix) + "stopped";
                s->cancel->store(true);
            }
    }
    for (auto& s : dropped) changed(s, true);
    wake_.notify_all();
    bool stopped;
    {
        std::unique_lock lock(mu_);
        stopped = idle_.wait_for(lock, grace, [this] { return running_ == 0; });
    }
    for (std::thread& t : threads_) {
        if (stopped)
            t.join();
        else
            t.detach();
    }
    threads_.clear();
    return stopped;
}

}  // namespace heapd::daemon
