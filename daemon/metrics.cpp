#include "daemon/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <prometheus/text_serializer.h>

namespace coloc::daemon {

Histogram::Histogram(std::vector<double> upper_bounds) : bounds_(std::move(upper_bounds)) {
    for (std::size_t i = 0; i < bounds_.size(); ++i)
        if (!std::isfinite(bounds_[i]) || (i > 0 && bounds_[i] <= bounds_[i - 1]))
            throw std::invalid_argument("histogram bounds must be finite and strictly ascending");
    per_bucket_.assign(bounds_.size() + 1, 0);
}

void Histogram::observe(double value) {
    if (std::isnan(value)) return;
    auto it = std::lower_bound(bounds_.begin(), bounds_.end(), value);  // first bound >= value
    ++per_bucket_[static_cast<std::size_t>(it - bounds_.begin())];
    ++count_;
    sum_ += value;
}

std::vector<std::uint64_t> Histogram::cumulative() const {
    std::vector<std::uint64_t> out(per_bucket_.size());
    std::uint64_t running = 0;
    for (std::size_t i = 0; i < per_bucket_.size(); ++i) out[i] = running += per_bucket_[i];
    return out;
}

Histogram latency_histogram() {
    return Histogram({0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1});
}

Histogram slowdown_histogram() { return Histogram({1, 1.05, 1.1, 1.2, 1.3, 1.5, 1.75, 2, 2.5, 3, 4}); }

Histogram decision_histogram() {
    return Histogram({1e-6, 2e-6,   3e-6, 5e-6,   7.5e-6, 1e-5, 1.5e-5, 2e-5, 2.5e-5, 3e-5, 4e-5,
                      5e-5, 7.5e-5, 1e-4, 1.5e-4, 2e-4,   3e-4, 5e-4,   1e-3, 2.5e-3, 1e-2, 1e-1});
}

double histogram_quantile(double q, const std::vector<double>& bounds, const std::vector<std::uint64_t>& cumulative) {
    if (cumulative.empty() || cumulative.back() == 0) return std::numeric_limits<double>::quiet_NaN();
    const double rank = q * static_cast<double>(cumulative.back());
    for (std::size_t i = 0; i < bounds.size(); ++i) {
        if (static_cast<double>(cumulative[i]) < rank) continue;
        const double lo = i == 0 ? 0.0 : bounds[i - 1];
        const double below = i == 0 ? 0.0 : static_cast<double>(cumulative[i - 1]);
        const double in_bucket = static_cast<double>(cumulative[i]) - below;
        return lo + (bounds[i] - lo) * (in_bucket > 0 ? (rank - below) / in_bucket : 1.0);
    }
    return bounds.empty() ? std::numeric_limits<double>::quiet_NaN() : bounds.back();  // in +Inf: the last bound
}

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

class Families {
public:
    MetricFamily& family(const char* name, MetricType type, const char* help) {
        return families_.emplace_back(MetricFamily{name, help, type, {}});
    }
    void scalar(const char* name, MetricType type, const char* help, std::int64_t value) {
        sample(family(name, type, help), {}, value);
    }
    // One sample of a counter or gauge family, with `labels`.
    static void sample(MetricFamily& f, std::vector<ClientMetric::Label> labels, std::int64_t value) {
        ClientMetric m;
        m.label = std::move(labels);
        (f.type == MetricType::Counter ? m.counter.value : m.gauge.value) = static_cast<double>(value);
        f.metric.push_back(std::move(m));
    }
    static void histogram(MetricFamily& f, std::vector<ClientMetric::Label> labels, const Histogram& h) {
        ClientMetric m;
        m.label = std::move(labels);
        m.histogram.sample_count = h.count();
        m.histogram.sample_sum = h.sum();
        const auto cum = h.cumulative();
        for (std::size_t i = 0; i < h.bounds().size(); ++i) m.histogram.bucket.push_back({cum[i], h.bounds()[i]});
        m.histogram.bucket.push_back({h.count(), std::numeric_limits<double>::infinity()});
        f.metric.push_back(std::move(m));
    }
    std::vector<MetricFamily> take() { return std::move(families_); }

private:
    std::vector<MetricFamily> families_;
};

}  // namespace

std::vector<prometheus::MetricFamily> metric_families(const MetricsSnapshot& s) {
    constexpr auto kCounter = MetricType::Counter;
    constexpr auto kGauge = MetricType::Gauge;
    Families w;
    Families::sample(w.family("coloc_build_info", kGauge, "Always 1; the version label says which coloc runs."),
                     {{"version", s.version}}, 1);
    w.scalar("coloc_start_time_seconds", kGauge, "When colocd started, in seconds since the epoch.", s.start_time_s);

    w.scalar("coloc_requests_total", kCounter, "Requests received, answered or refused.", s.requests);
    w.scalar("coloc_placements_total", kCounter, "New placement decisions.", s.placements);
    w.scalar("coloc_placements_reused_total", kCounter, "Job steps answered from the job's earlier decision.",
             s.reused);
    w.scalar("coloc_placements_adopted_total", kCounter,
             "Placements the plugin made alone while colocd was away, reported afterwards.", s.adopted);
    w.scalar("coloc_jobs_ended_total", kCounter, "Ended reports (one per job and node).", s.ended);
    w.scalar("coloc_observations_total", kCounter, "Measured iteration times the model learned from.", s.observations);
    w.scalar("coloc_elapsed_jobs_used_total", kCounter,
             "Ended jobs whose elapsed times the model learns pair delays from.", s.elapsed_used);
    MetricFamily& left_out = w.family("coloc_elapsed_jobs_left_out_total", kCounter,
                                      "Ended jobs left out of learning from elapsed times, by reason.");
    for (const auto& [reason, n] : s.elapsed_left_out) Families::sample(left_out, {{"reason", reason}}, n);
    w.scalar("coloc_elapsed_refits_total", kCounter, "Refits of pair delays from ended jobs' elapsed times.",
             s.elapsed_refits);
    MetricFamily& refused = w.family("coloc_requests_refused_total", kCounter, "Error replies, by error code.");
    for (const auto& [code, n] : s.refused_by_code) Families::sample(refused, {{"code", code}}, n);
    w.scalar("coloc_auth_refused_total", kCounter, "Requests refused for a missing or invalid munge credential.",
             s.auth_refused);

    w.scalar("coloc_running_jobs", kGauge, "Jobs colocd counts as running.", s.running_jobs);
    w.scalar("coloc_gpu_slots_used", kGauge, "GPU slots held by running jobs.", s.slots_used);
    w.scalar("coloc_gpu_slots", kGauge, "GPU slots on all nodes (GPUs times slots per GPU).", s.slots_total);
    w.scalar("coloc_database_backlog", kGauge,
             "History records queued because the database cannot be written, not yet stored.", s.database_backlog);
    w.scalar("coloc_database_journal_bytes", kGauge, "Bytes of the backlog's journal in use (synced queued records).",
             s.database_journal_bytes);
    w.scalar("coloc_database_journal_failed", kGauge,
             "1 while the backlog's journal cannot be written (writing requests are refused), else 0.",
             s.database_journal_failed);
    w.scalar("coloc_database_write_failures_total", kCounter,
             "Writes and retries that failed because the database could not be written (full, locked, read-only).",
             s.database_write_failures);
    w.scalar("coloc_database_written_late_total", kCounter, "Queued history records stored later.",
             s.database_written_late);

    MetricFamily& requests = w.family("coloc_request_duration_seconds", MetricType::Histogram,
                                      "Time colocd took to answer a request, by op.");
    for (const auto& [op, h] : s.request_seconds_by_op) Families::histogram(requests, {{"op", op}}, h);
    Families::histogram(w.family("coloc_predicted_slowdown_ratio", MetricType::Histogram,
                                 "Predicted slowdown of each placed job (co-located time / solo time)."),
                        {}, s.predicted_slowdown);
    Families::histogram(w.family("coloc_observed_slowdown_ratio", MetricType::Histogram,
                                 "Observed slowdown of jobs whose iteration times were reported (co-located / solo)."),
                        {}, s.observed_slowdown);
    Families::histogram(
        w.family("coloc_decision_duration_seconds", MetricType::Histogram,
                 "Time the placement engine took for one place decision (without munge, I/O or the database)."),
        {}, s.decision_seconds);
    Families::histogram(w.family("coloc_decision_cpu_seconds", MetricType::Histogram,
                                 "CPU time the placement engine used for one place decision (its own work, without "
                                 "the time other threads held the core)."),
                        {}, s.decision_cpu_seconds);
    MetricFamily& stages = w.family("coloc_request_stage_seconds", MetricType::Histogram,
                                    "Time each request spent in each stage inside colocd: open (envelope and "
                                    "credential), handle, commit, sync (the WAL on disk), reply.");
    for (std::size_t i = 0; i < std::size(RequestStages::kNames); ++i)
        Families::histogram(stages, {{"stage", RequestStages::kNames[i]}}, s.request_stages.at(i));
    return w.take();
}

std::string render_metrics(const MetricsSnapshot& s) {
    return prometheus::TextSerializer().Serialize(metric_families(s));
}

}  // namespace coloc::daemon
