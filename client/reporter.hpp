// What coloc_report.h's functions do: sum iteration times on the training thread, send their
// mean to colocd (`observe`) at most once per interval from a thread of its own, so that a slow
// or absent colocd or munged never holds up training.
#pragma once

#include <sys/types.h>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

namespace coloc::client {

using LogSink = std::function<void(const std::string&)>;

struct ReportSettings {
    std::string endpoint = "ipc:///run/coloc/colocd.sock";
    std::int64_t job_id = 0;
    std::string node;          // sent along (informational: colocd reads the job); may be empty
    std::string munge_socket;  // empty = munge's default
    double interval_s = 30;    // at most one report per interval; 0 = one per iteration
    int timeout_ms = 500;      // the sending thread's wait for colocd's reply
};

// The settings from the environment (see coloc_report.h), or nullopt with `why` saying why
// reporting is off (empty when there is nothing to say: not a coloc job, or turned off).
std::optional<ReportSettings> settings_from_env(std::string& why);

struct Batch {
    double mean_s = 0;
    std::int64_t count = 0;
};

// The observe request for a batch: what colocd reads (job_id, iter_time_s) and, informational,
// how many iterations the mean is over and the node.
nlohmann::json observe_body(const ReportSettings& s, const Batch& b);

class Reporter {
public:
    // `log` gets each log line (default: stderr); only the first failed send is logged.
    explicit Reporter(ReportSettings s, LogSink log = {});
    ~Reporter();
    Reporter(const Reporter&) = delete;
    Reporter& operator=(const Reporter&) = delete;

    void iteration(double seconds);
    void flush();
    void close();  // sends what is left, waits for the sending thread; idempotent

    // For tests: reports sent and acknowledged, and those that failed.
    std::int64_t sent() const;
    std::int64_t failed() const;
    // Waits until nothing is queued or being sent; false when `timeout_ms` passed first.
    bool wait_idle(int timeout_ms);

private:
    void enqueue_locked();
    void run();
    void send(const Batch& b);

    const ReportSettings settings_;
    LogSink log_;
    const pid_t pid_;  // a forked child (a data loader worker) reports nothing
    mutable std::mutex mu_;
    std::condition_variable wake_;
    std::condition_variable idle_;
    double sum_ = 0;
    std::int64_t count_ = 0;
    double window_start_ = 0;  // steady clock seconds
    std::optional<Batch> pending_;
    bool sending_ = false;
    bool stop_ = false;
    bool closed_ = false;
    bool failure_logged_ = false;
    std::int64_t sent_ = 0;
    std::int64_t failed_ = 0;
    std::thread thread_;
};

}  // namespace coloc::client
