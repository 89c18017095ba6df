#pragma once
// Jobs and the worker threads that run them. The io_context thread submits, lists and cancels;
// listeners hear of every change on the io_context thread. A job kind is a work function: an
// analysis (analyze_job.h) or a dump, which dumps a JVM (or adopts its own dump) into a staged store
// entry and then analyzes it (dump_job.h).
//
// `workers` jobs at most do heapd's own work at once (copying, analysing: memory and cores). A job
// that waits on something outside heapd (a JVM writing its dump, a JVM in its OutOfMemoryError hook,
// an agent's answer) gives its share to the next job meanwhile, on a thread of its own, and takes
// it back before it goes on; so a JVM that answers slowly, or someone pretending to be one, holds
// no one else's dump or analysis. Each owner has at most max(2, workers) jobs running at once.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/logger.h>
#include <boost/asio/io_context.hpp>

#include "daemon/store/job_record.h"
#include "daemon/store/store.h"
#include "formats/wire/protocol.h"

namespace heapd::daemon {

// What a job's work ends with: the id of the store entry it made, or why it failed (its code
// becomes the wire's error kind in the job's record, wire::kind_of).
using job_outcome = result<std::string>;

class job_manager;

// What a job's work sees while it runs on a worker thread.
class job_context {
public:
    std::uint64_t id() const { return id_; }
    // True once the job was cancelled; work checks this between its phases and then stops.
    bool cancelled() const { return cancel_->load(); }
    // Reports the phase running and bytes of work done out of total.
    void progress(std::string_view phase, std::uint64_t done, std::uint64_t total);

    // While the returned guard lives the job waits on something outside heapd: its share of the
    // workers goes to the next job, and comes back when the guard goes (before any job not yet
    // started, once a share is free).
    class outside_wait {
    public:
        explicit outside_wait(job_context* ctx);
        ~outside_wait();
        outside_wait(const outside_wait&) = delete;
        outside_wait& operator=(const outside_wait&) = delete;

    private:
        job_context* ctx_;
    };
    [[nodiscard]] outside_wait waiting_outside() { return outside_wait(this); }

private:
    friend class job_manager;
    job_context(job_manager* m, std::uint64_t id, std::shared_ptr<std::atomic<bool>> cancel)
        : manager_(m), id_(id), cancel_(std::move(cancel)) {}
    job_manager* manager_;
    std::uint64_t id_;
    std::shared_ptr<std::atomic<bool>> cancel_;
};

using job_work = std::function<job_outcome(job_context&)>;
// Told of a job's every change (state, progress), on the io_context thread, with a snapshot.
using job_listener = std::function<void(const job_record&)>;

// The jobs of this daemon, the queue, and the worker threads.
class job_manager {
public:
    job_manager(boost::asio::io_context& io, store& s, unsigned workers, std::shared_ptr<spdlog::logger> log);
    ~job_manager();
    job_manager(const job_manager&) = delete;
    job_manager& operator=(const job_manager&) = delete;

    // Told of every change of every job (queued, each phase, the end), on the thread that made it,
    // before the job's own listener hears of it; for the metrics' counters. Set before any submit.
    void observe(job_listener observer) { observer_ = std::move(observer); }
    // Jobs of earlier runs, as the store kept them; ids continue after theirs.
    void restore(const std::vector<job_record>& history);
    // Queues a job (kind, owner, trigger, subject taken from spec); returns its record.
    job_record submit(job_record spec, job_work work, job_listener listener = {});
    std::vector<job_record> list() const;  // newest first
    std::optional<job_record> find(std::uint64_t id) const;
    // A queued job is cancelled at once, a running one is asked to stop at its next phase.
    std::optional<job_record> cancel(std::uint64_t id);

    // Jobs waiting and running now.
    struct counts {
        unsigned queued = 0, running = 0;
    };
    counts count() const;
    // Jobs of that owner waiting now.
    unsigned queued_of(uid_t owner) const;
    unsigned workers() const { return workers_; }

    // Cancels queued jobs, asks running ones to stop and waits for them up to grace. False when some
    // did not stop in time: their records stay "running", and the next start marks them failed.
    bool shutdown(std::chrono::milliseconds grace);

private:
    friend class job_context;
    // A job and what runs it.
    struct slot {
        job_record record;
        job_work work;
        job_listener listener;
        std::shared_ptr<std::atomic<bool>> cancel = std::make_shared<std::atomic<bool>>(false);
        std::string cancel_reason = "cancelled";
        std::uint64_t version = 0;    // changes made to record (under mu_)
        std::mutex persist_mu;        // one write of the record at a time, never an older one last
        std::uint64_t persisted = 0;  // the version on disk
        bool holds_share = false;     // of the workers (under mu_): false while it waits outside
    };

    void run_worker();
    // The queued job to run next (under mu_): of the owners below their cap of running jobs, the
    // one with the fewest running, then the one served least recently, then the oldest: one user's
    // many jobs cannot starve another's. queue_.end() when none may start.
    std::deque<std::shared_ptr<slot>>::iterator next_queued();
    // Whether a thread may start a queued job now (under mu_).
    bool may_start();
    // Starts another thread when a job may start and every thread is with a job (under mu_).
    void add_thread_if_needed();
    // A waiting_outside() guard begins and ends.
    void step_outside(std::uint64_t id);
    void come_back(std::uint64_t id);
    void run_job(const std::shared_ptr<slot>& s);
    void finish(const std::shared_ptr<slot>& s, const job_outcome& outcome);
    void progress(std::uint64_t id, std::string_view phase, std::uint64_t done, std::uint64_t total);
    // Persists and tells the listener; takes a snapshot under the lock.
    void changed(const std::shared_ptr<slot>& s, bool persist);
    void forget_old_jobs();

    boost::asio::io_context& io_;
    store& store_;
    std::shared_ptr<spdlog::logger> log_;
    mutable std::mutex mu_;
    std::condition_variable wake_, idle_;
    std::map<std::uint64_t, std::shared_ptr<slot>> jobs_;
    std::deque<std::shared_ptr<slot>> queue_;
    std::vector<std::thread> threads_;  // grows past workers_ while jobs wait outside
    unsigned workers_ = 1;              // shares: jobs doing heapd's own work at once
    unsigned per_owner_ = 2;            // jobs of one owner running at once, in any phase
    unsigned busy_ = 0;                 // shares held
    unsigned returning_ = 0;            // jobs back from outside, waiting for a share
    unsigned idle_threads_ = 0;
    std::uint64_t next_id_ = 1;
    unsigned running_ = 0;
    std::map<uid_t, unsigned> running_by_owner_;
    std::map<uid_t, std::uint64_t> last_served_;  // the owner's latest start, as a sequence number
    std::uint64_t starts_ = 0;
    bool stopping_ = false;
    job_listener observer_;
};

}  // namespace heapd::daemon
