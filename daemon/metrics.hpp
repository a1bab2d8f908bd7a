// colocd's metrics as Prometheus metric families, in the text exposition format (version
// 0.0.4) prometheus-cpp writes: what `colocctl metrics` prints and what the HTTP endpoint
// serves. Pure: the caller fills a snapshot, the families only carry it, so that both outputs
// are the same text.
#pragma once

#include <prometheus/metric_family.h>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace coloc::daemon {

// A cumulative histogram with fixed upper bounds; +Inf is implied.
class Histogram {
public:
    // `upper_bounds`: finite and strictly ascending (std::invalid_argument otherwise).
    explicit Histogram(std::vector<double> upper_bounds);

    void observe(double value);  // NaN is ignored

    const std::vector<double>& bounds() const { return bounds_; }
    // Observations <= bounds()[i], cumulative; one more entry for +Inf (== count()).
    std::vector<std::uint64_t> cumulative() const;
    std::uint64_t count() const { return count_; }
    double sum() const { return sum_; }

private:
    std::vector<double> bounds_;
    std::vector<std::uint64_t> per_bucket_;  // non-cumulative, bounds_.size() + 1 entries
    std::uint64_t count_ = 0;
    double sum_ = 0;
};

// Request latency in seconds: 0.5 ms .. 1 s (the plugin's deadline is 250 ms by default).
Histogram latency_histogram();
// Slowdown as (co-located time / solo time): 1 .. 4.
Histogram slowdown_histogram();
// The placement engine's time for one decision in seconds: 1 us .. 100 ms, fine around the
// 50 us a decision should stay under.
Histogram decision_histogram();
// The q-quantile (0 < q < 1) the way Prometheus' histogram_quantile estimates it: linear within
// the bucket that holds it; NaN for an empty histogram.
double histogram_quantile(double q, const std::vector<double>& bounds, const std::vector<std::uint64_t>& cumulative);

// Where a request's time goes inside colocd, stage by stage, in seconds (bench/place-latency
// prints them beside the client's end-to-end time): open (envelope and munge credential), handle
// (the op's handler, the decision included), commit (its round's COMMIT, the WAL written),
// sync (waiting for the WAL's sync with database_sync: full), reply (the round's replies sent).
struct RequestStages {
    static constexpr const char* kNames[] = {"open", "handle", "commit", "sync", "reply"};
    Histogram open = decision_histogram(), handle = decision_histogram(), commit = decision_histogram(),
              sync = decision_histogram(), reply = decision_histogram();
    const Histogram& at(std::size_t i) const {
        const Histogram* all[] = {&open, &handle, &commit, &sync, &reply};
        return *all[i];
    }
};

struct MetricsSnapshot {
    std::string version = "0.1";    // coloc_build_info{version}
    std::int64_t start_time_s = 0;  // epoch seconds colocd started

    // Counters (since colocd started).
    std::int64_t requests = 0;
    std::int64_t placements = 0;  // new decisions
    std::int64_t reused = 0;      // later steps answered from an earlier decision
    std::int64_t adopted = 0;     // plugin fallback placements reported afterwards
    std::int64_t ended = 0;
    std::int64_t observations = 0;                         // iteration timings the model learned from
    std::int64_t elapsed_used = 0;                         // ended jobs whose elapsed times the model learns from
    std::int64_t elapsed_refits = 0;                       // pair delays refitted from them
    std::map<std::string, std::int64_t> elapsed_left_out;  // reason -> ended jobs left out
    std::int64_t auth_refused = 0;
    std::map<std::string, std::int64_t> refused_by_code;  // proto error code -> replies

    // Gauges.
    std::int64_t running_jobs = 0;
    std::int64_t slots_used = 0;
    std::int64_t slots_total = 0;
    std::int64_t database_backlog = 0;         // history records queued, not yet stored
    std::int64_t database_journal_bytes = 0;   // of the backlog's journal, in use
    std::int64_t database_journal_failed = 0;  // 1 while the journal cannot be written

    // Counters of the database's trouble.
    std::int64_t database_write_failures = 0;  // writes and retries that failed for write trouble
    std::int64_t database_written_late = 0;    // queued records stored later

    // Histograms. Keys of the per-op map become the `op` label: keep them to known ops.
    std::map<std::string, Histogram> request_seconds_by_op;
    Histogram predicted_slowdown = slowdown_histogram();
    Histogram observed_slowdown = slowdown_histogram();
    Histogram decision_seconds = decision_histogram();  // the engine alone, per place request
    // The serving thread's CPU time in the same decisions: the engine's own work, apart from the
    // time other threads held the core.
    Histogram decision_cpu_seconds = decision_histogram();
    RequestStages request_stages;
};

std::vector<prometheus::MetricFamily> metric_families(const MetricsSnapshot& snapshot);
std::string render_metrics(const MetricsSnapshot& snapshot);

}  // namespace coloc::daemon
