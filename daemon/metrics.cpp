#include "daemon/metrics.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>

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

// Go's strconv.FormatFloat(v, 'g', -1, 64) in spirit: the shortest text that reads back exactly.
std::string number(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general);
    return ec == std::errc() ? std::string(buf, end) : "NaN";
}

std::string label_value(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '"')
            out += "\\\"";
        else if (c == '\n')
            out += "\\n";
        else
            out += c;
    }
    return out;
}

class Writer {
public:
    void family(const char* name, const char* type, const char* help) {
        text_ += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
    }
    // `labels` is either empty or `key="value",...` without braces.
    void sample(const std::string& name, const std::string& labels, const std::string& value) {
        text_ += name;
        if (!labels.empty()) text_ += "{" + labels + "}";
        text_ += " " + value + "\n";
    }
    void sample(const std::string& name, std::int64_t value) { sample(name, "", std::to_string(value)); }

    void scalar(const char* name, const char* type, const char* help, std::int64_t value) {
        family(name, type, help);
        sample(name, value);
    }

    void histogram(const std::string& name, const std::string& labels, const Histogram& h) {
        const std::string sep = labels.empty() ? "" : labels + ",";
        const auto cum = h.cumulative();
        for (std::size_t i = 0; i < h.bounds().size(); ++i)
            sample(name + "_bucket", sep + "le=\"" + number(h.bounds()[i]) + "\"", std::to_string(cum[i]));
        sample(name + "_bucket", sep + "le=\"+Inf\"", std::to_string(h.count()));
        sample(name + "_sum", labels, number(h.sum()));
        sample(name + "_count", labels, std::to_string(h.count()));
    }

    std::string take() { return std::move(text_); }

private:
    std::string text_;
};

}  // namespace

std::string render_metrics(const MetricsSnapshot& s) {
    Writer w;
    w.family("coloc_build_info", "gauge", "Always 1; the version label says which coloc runs.");
    w.sample("coloc_build_info", "version=\"" + label_value(s.version) + "\"", "1");
    w.scalar("coloc_start_time_seconds", "gauge", "When colocd started, in seconds since the epoch.", s.start_time_s);

    w.scalar("coloc_requests_total", "counter", "Requests received, answered or refused.", s.requests);
    w.scalar("coloc_placements_total", "counter", "New placement decisions.", s.placements);
    w.scalar("coloc_placements_reused_total", "counter", "Job steps answered from the job's earlier decision.",
             s.reused);
    w.scalar("coloc_placements_adopted_total", "counter",
             "Placements the plugin made alone while colocd was away, reported afterwards.", s.adopted);
    w.scalar("coloc_jobs_ended_total", "counter", "Ended reports (one per job and node).", s.ended);
    w.scalar("coloc_observations_total", "counter", "Measured iteration times the model learned from.", s.observations);
    w.scalar("coloc_elapsed_jobs_used_total", "counter",
             "Ended jobs whose elapsed times the model learns pair delays from.", s.elapsed_used);
    w.family("coloc_elapsed_jobs_left_out_total", "counter",
             "Ended jobs left out of learning from elapsed times, by reason.");
    for (const auto& [reason, n] : s.elapsed_left_out)
        w.sample("coloc_elapsed_jobs_left_out_total", "reason=\"" + label_value(reason) + "\"", std::to_string(n));
    w.scalar("coloc_elapsed_refits_total", "counter", "Refits of pair delays from ended jobs' elapsed times.",
             s.elapsed_refits);
    w.family("coloc_requests_refused_total", "counter", "Error replies, by error code.");
    for (const auto& [code, n] : s.refused_by_code)
        w.sample("coloc_requests_refused_total", "code=\"" + label_value(code) + "\"", std::to_string(n));
    w.scalar("coloc_auth_refused_total", "counter", "Requests refused for a missing or invalid munge credential.",
             s.auth_refused);

    w.scalar("coloc_running_jobs", "gauge", "Jobs colocd counts as running.", s.running_jobs);
    w.scalar("coloc_gpu_slots_used", "gauge", "GPU slots held by running jobs.", s.slots_used);
    w.scalar("coloc_gpu_slots", "gauge", "GPU slots on all nodes (GPUs times slots per GPU).", s.slots_total);
    w.scalar("coloc_database_backlog", "gauge",
             "History records queued because the database cannot be written, not yet stored.", s.database_backlog);
    w.scalar("coloc_database_write_failures_total", "counter",
             "Writes and retries that failed because the database could not be written (full, locked, read-only).",
             s.database_write_failures);
    w.scalar("coloc_database_written_late_total", "counter", "Queued history records stored later.",
             s.database_written_late);

    w.family("coloc_request_duration_seconds", "histogram", "Time colocd took to answer a request, by op.");
    for (const auto& [op, h] : s.request_seconds_by_op)
        w.histogram("coloc_request_duration_seconds", "op=\"" + label_value(op) + "\"", h);
    w.family("coloc_predicted_slowdown_ratio", "histogram",
             "Predicted slowdown of each placed job (co-located time / solo time).");
    w.histogram("coloc_predicted_slowdown_ratio", "", s.predicted_slowdown);
    w.family("coloc_observed_slowdown_ratio", "histogram",
             "Observed slowdown of jobs whose iteration times were reported (co-located / solo).");
    w.histogram("coloc_observed_slowdown_ratio", "", s.observed_slowdown);
    w.family("coloc_decision_duration_seconds", "histogram",
             "Time the placement engine took for one place decision (without munge, I/O or the database).");
    w.histogram("coloc_decision_duration_seconds", "", s.decision_seconds);
    w.family("coloc_decision_cpu_seconds", "histogram",
             "CPU time the placement engine used for one place decision (its own work, without the time "
             "other threads held the core).");
    w.histogram("coloc_decision_cpu_seconds", "", s.decision_cpu_seconds);
    return w.take();
}

}  // namespace coloc::daemon
