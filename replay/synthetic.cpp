#include "replay/synthetic.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

namespace coloc::replay {

namespace {
// Share of jobs by size: most ask for one GPU, few for many (as in Philly and Helios).
constexpr std::pair<int, double> kSizes[] = {{1, 0.45},  {2, 0.15},  {4, 0.15}, {8, 0.15},
                                             {16, 0.05}, {32, 0.03}, {64, 0.02}};
}  // namespace

Trace synthetic_trace(const SyntheticOptions& o) {
    if (o.offered_load <= 0 || o.cluster_gpus <= 0 || o.median_run_s <= 0 || o.max_gpus < 1)
        throw std::invalid_argument("synthetic trace: load, GPUs, run time and sizes must be positive");
    if (o.daily_swing < 0 || o.daily_swing >= 1)
        throw std::invalid_argument("synthetic trace: the daily swing must be in [0, 1)");
    std::vector<int> sizes;
    std::vector<double> weights;
    const std::vector<std::pair<int, double>> mix =
        o.sizes.empty() ? std::vector<std::pair<int, double>>(std::begin(kSizes), std::end(kSizes)) : o.sizes;
    for (auto [size, w] : mix)
        if (size >= 1 && w > 0 && size <= o.max_gpus) {
            sizes.push_back(size);
            weights.push_back(w);
        }
    if (sizes.empty()) throw std::invalid_argument("synthetic trace: no job size fits max_gpus");
    std::mt19937_64 rng(o.seed);
    std::discrete_distribution<int> size_of(weights.begin(), weights.end());
    std::lognormal_distribution<double> run_of(std::log(o.median_run_s), o.sigma);
    std::uniform_real_distribution<double> overestimate(1.0, 3.0);

    // Mean GPU-seconds per job, to pace arrivals: E[size] * E[run] (log-normal mean, capped).
    double total_w = 0, mean_size = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        total_w += weights[i];
        mean_size += weights[i] * sizes[i];
    }
    mean_size /= total_w;
    const double mean_run = std::min(o.median_run_s * std::exp(o.sigma * o.sigma / 2), o.max_run_s);
    const double rate = o.offered_load * o.cluster_gpus / (mean_size * mean_run);
    std::exponential_distribution<double> unit_gap(1.0);
    constexpr double kDay = 86400, kTwoPi = 6.283185307179586;

    Trace t;
    t.format = TraceFormat::Swf;
    t.source = "<synthetic seed " + std::to_string(o.seed) + ">";
    t.jobs.reserve(o.jobs);
    double clock = 0;
    for (std::size_t i = 0; i < o.jobs; ++i) {
        TraceJob j;
        j.id = i + 1;
        // The rate at the previous arrival paces the next one (gaps are far shorter than a day).
        clock += unit_gap(rng) / (rate * (1 + o.daily_swing * std::sin(kTwoPi * clock / kDay)));
        j.submit = std::round(clock);
        j.gpus = sizes[static_cast<std::size_t>(size_of(rng))];
        j.run_time = std::clamp(std::round(run_of(rng)), 1.0, o.max_run_s);
        j.time_limit = std::ceil(j.run_time * overestimate(rng) / 60) * 60;
        j.user = "u" + std::to_string(1 + i % 97);
        j.state = "COMPLETED";
        t.jobs.push_back(std::move(j));
    }
    t.records = t.jobs.size();
    return t;
}

}  // namespace coloc::replay
