// bench/replay-speed: how fast the replay runs the coloc policy on a large cluster.
//
// A seeded synthetic trace (replay/synthetic.hpp: sizes 1 to 64 GPUs, log-normal run times,
// Poisson arrivals offering all of the cluster's GPU time with a daily cycle whose peaks bring
// 1.5 times the mean, so that jobs queue by day and drain by night: every decision meets a
// full cluster and the sharing rule weighs real waits) on 1,000 nodes x 8 GPUs (2 slots per
// GPU, NVLink pairs, 16 nodes per leaf link), placed by the coloc policy with coloc's model on
// Gavel's job types (drawn per job, seeded); how fast jobs run is Gavel's measured V100 pairs
// (built in), as in bench/replay-quality. One core (the process pins itself to one).
// Targets: 1,000,000 jobs in under 60 s and under 2 GB peak memory at a load where the mean wait
// is at least 10 minutes, and the time for 1,000,000 jobs at most 12 times that for 100,000 (the cost grows about linearly; the first 100,000 jobs
// include the cluster filling up, which is cheaper than the steady state most of the 1,000,000
// see). Times are CPU seconds of preparation (profiles, workload) plus replay, the fastest of a
// few runs (one at 1M once it is well past the target, and that one stopped at 5 times the
// target: its time and ratio are then lower bounds); the trace generation is shown apart, and
// the wall time of the whole bench at the end. The time for 3,300,000 jobs (a site's six months)
// is extrapolated from the two, growing as it grew from 100,000 to 1,000,000.
// The judged runs must queue: the mean wait at least kMinWait. Shown but not judged: 100,000 jobs at 70 %
// without a cycle (before the sharing rule held jobs back, none waited there). The judged runs
// place with the model as it is (learning off); the learning replay (coloc's model learns from
// the jobs it places, as colocd's does, replay/simulator.hpp) runs the judged 100k once more and
// must take at most 1.5 times as long.
#include <sched.h>
#include <sys/resource.h>
#include <time.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

#include "model/coloc_model.hpp"
#include "replay/gavel_throughputs.hpp"
#include "replay/measured_truth.hpp"
#include "replay/replay.hpp"
#include "replay/synthetic.hpp"

using namespace coloc;

namespace {

constexpr double kMaxSeconds = 60;
constexpr double kMaxPeakGb = 2;
constexpr double kMaxRatio = 12;
constexpr double kMaxLearningTimes = 1.5;  // the learning replay against the one that does not learn
constexpr double kMinWait = 600;           // the judged runs' mean wait (seconds): the queue is deep
constexpr double kSiteJobs = 3.3e6;        // a site's six months, extrapolated
// The judged runs' mean offered load: jobs queue. (At 0.9 a placement that keeps whole nodes
// whole for the jobs that need them waits under 10 minutes on this trace.)
constexpr double kOffered = 1.0;
constexpr double kSwing = 0.5;        // their daily cycle: peak arrivals 1.5x the mean
constexpr double kIdleOffered = 0.7;  // shown, not judged: a lower load without a cycle

// The process's CPU time: the replay is single-threaded and pinned to one core, so this is the
// time it took that core, whatever else shares the machine (CI runners and builds do).
double now() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double wall() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double peak_rss_gb() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_maxrss) / (1024.0 * 1024.0);  // ru_maxrss is in KiB
}

struct Run {
    double generate_s = 0, prepare_s = 0, replay_s = 0;
    std::size_t jobs = 0, events = 0, decisions = 0;
    std::size_t stopped_at = 0;  // > 0: the replay ran past its budget with this many jobs finished
    replay::Summary summary;
};

// A replay far past the target tells nothing more by running on: it is stopped at this many
// times the target and reported as such.
constexpr double kBudgetTimes = 5;
struct OverBudget {
    std::size_t finished;
};

Run run(std::size_t jobs, const model::ColocModel& model, const model::InterferenceModel& truth,
        const place::Topology& topo, double offered = kOffered, double swing = kSwing, bool learning = false) {
    Run r;
    double t = now();
    replay::SyntheticOptions so;
    so.jobs = jobs;
    so.seed = 1;
    so.cluster_gpus = topo.total_gpus();
    so.offered_load = offered;
    so.daily_swing = swing;
    replay::Trace trace = replay::synthetic_trace(so);
    r.generate_s = now() - t;
    t = now();
    replay::ProfileCounts counts;
    auto profiles = replay::assign_profiles(trace, model.catalogue(), nullptr, 1, counts);
    replay::Workload w = replay::build_workload(trace, profiles, counts, topo, {1.0});
    trace = {};
    r.prepare_s = now() - t;
    replay::ReplaySetup setup;
    setup.topology = &topo;
    setup.policies = {"coloc"};
    setup.model = &model;
    setup.truth = &truth;
    setup.sim.record_busy = false;
    setup.learning = learning;
    t = now();
    const double budget = kBudgetTimes * kMaxSeconds - r.prepare_s;
    setup.sim.progress = [&](std::size_t finished, std::size_t) {
        if (now() - t > budget) throw OverBudget{finished};
    };
    replay::ReplayResult result;
    try {
        result = replay::run_replay(w, setup);
    } catch (const OverBudget& over) {
        r.replay_s = now() - t;
        r.jobs = w.jobs.size();
        r.stopped_at = std::max<std::size_t>(over.finished, 1);
        return r;
    }
    r.replay_s = now() - t;
    r.jobs = w.jobs.size();
    r.summary = result.summaries.front();
    r.events = r.summary.events;
    r.decisions = r.summary.decisions;
    return r;
}

void print(const char* label, const Run& r) {
    const double total = r.prepare_s + r.replay_s;
    if (r.stopped_at > 0) {
        std::printf("%-10s %9zu jobs: stopped past %.0f s (%.0f times the target) with %zu finished; %9.0f jobs/s\n",
                    label, r.jobs, total, kBudgetTimes, r.stopped_at, static_cast<double>(r.stopped_at) / total);
        return;
    }
    std::printf(
        "%-10s %9zu jobs: generate %6.2f s, prepare %5.2f s, replay %6.2f s; %9.0f jobs/s, %10.0f events/s, "
        "%zu decisions; mean JCT %s, mean wait %s, mean slowdown %.3f, GPU util %.1f%%\n",
        label, r.jobs, r.generate_s, r.prepare_s, r.replay_s, static_cast<double>(r.jobs) / total,
        static_cast<double>(r.events) / total, r.decisions, replay::format_duration(r.summary.mean_jct).c_str(),
        replay::format_duration(r.summary.mean_wait).c_str(), r.summary.mean_slowdown, 100 * r.summary.gpu_util);
}

}  // namespace

int main() {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    const bool pinned = sched_setaffinity(0, sizeof one, &one) == 0;
    model::ColocParams params;
    params.gpu_type = "v100";
    model::ColocModel model(model::catalogue_from(replay::gavel_measurements()), params);
    replay::MeasuredTruth truth(replay::builtin_gavel_pair_table("v100"));
    auto topo = place::uniform_topology(1000, 8, 2, 2, 16);
    std::printf(
        "replay-speed: coloc policy, 1000 nodes x 8 GPUs (2 slots per GPU), coloc model on %d profiles, "
        "truth: Gavel's V100 pairs; %s\n",
        model.catalogue().size(), pinned ? "pinned to one core" : "NOT pinned (sched_setaffinity failed)");
    // A busy machine only ever adds time: each size runs more than once and the fastest counts
    // (the replays are deterministic: every run does the same work).
    auto fastest = [&](std::size_t jobs, int times) {
        std::vector<Run> runs;
        for (int i = 0; i < times; ++i) runs.push_back(run(jobs, model, truth, topo));
        std::string all;
        for (const Run& r : runs)
            all += (all.empty() ? "" : ", ") + std::to_string(r.prepare_s + r.replay_s).substr(0, 5);
        std::sort(runs.begin(), runs.end(),
                  [](const Run& a, const Run& b) { return a.prepare_s + a.replay_s < b.prepare_s + b.replay_s; });
        std::printf("%zu jobs, %d runs: %s s\n", jobs, times, all.c_str());
        return runs.front();
    };
    const double began = wall();
    Run small = fastest(100'000, 3);
    // Once well past the target, a second 1M run cannot change the verdict: it is skipped.
    Run big = fastest(1'000'000, 1);
    if (big.prepare_s + big.replay_s < 1.5 * kMaxSeconds) big = fastest(1'000'000, 2);
    print("100k", small);
    print("1M", big);
    const double big_s = big.prepare_s + big.replay_s, small_s = small.prepare_s + small.replay_s;
    const double ratio = big_s / small_s, peak = peak_rss_gb();
    // Not judged: a lower load without a cycle.
    const Run idle = run(100'000, model, truth, topo, kIdleOffered, 0);
    print("100k@0.7", idle);
    std::printf("(not judged) offered %.1f, no cycle: mean wait %s; %.1f s per 100k jobs, %.2fx the judged load's\n",
                kIdleOffered, replay::format_duration(idle.summary.mean_wait).c_str(), idle.prepare_s + idle.replay_s,
                (idle.prepare_s + idle.replay_s) / small_s);
    // The learning replay (coloc's model learns from the jobs it places, as colocd's does) on the
    // judged 100k: within the same budget means no slower than the replay that does not learn.
    const Run learning = run(100'000, model, truth, topo, kOffered, kSwing, true);
    print("100k, learning", learning);
    const double learning_s = learning.prepare_s + learning.replay_s;
    std::printf("learning replay: %s%.1f s per 100k jobs, %.2fx the replay that does not learn (target <= %.1fx)\n",
                learning.stopped_at > 0 ? "over " : "", learning_s, learning_s / small_s, kMaxLearningTimes);
    std::printf("wall time of the bench: %.1f s (CPU time is what counts: the machine may be shared)\n",
                wall() - began);
    // A stopped run's time and ratio are lower bounds.
    const char* at_least = big.stopped_at > 0 ? "over " : "";
    std::printf(
        "1M: %s%.1f s (target < %.0f s), peak memory %.2f GB (target < %.0f GB), 1M/100k time ratio %s%.1f "
        "(target <= %.0f)\n",
        at_least, big_s, kMaxSeconds, peak, kMaxPeakGb, at_least, ratio, kMaxRatio);
    // t(n) = t(1M) (n / 1M)^k, with k from the growth between 100k and 1M.
    const double growth = std::log10(std::max(ratio, 1.0));
    std::printf("3.3M jobs: %s%.0f s extrapolated (1M's time x 3.3^%.2f)\n", at_least,
                big_s * std::pow(kSiteJobs / 1e6, growth), growth);
    std::string missed;
    auto miss = [&](const std::string& what) { missed += (missed.empty() ? "" : ", ") + what; };
    if (big_s >= kMaxSeconds)
        miss("1M jobs took " + std::string(at_least) + std::to_string(static_cast<int>(big_s)) + " s" +
             (big.stopped_at > 0 ? " (stopped with " + std::to_string(big.stopped_at) + " finished)" : ""));
    if (learning.stopped_at > 0 || learning_s > kMaxLearningTimes * small_s)
        miss("learning replay " + std::string(learning.stopped_at > 0 ? "over " : "") +
             std::to_string(learning_s / small_s).substr(0, 5) + "x the replay that does not learn");
    if (peak >= kMaxPeakGb) miss("peak memory " + std::to_string(peak) + " GB");
    if (ratio > kMaxRatio) miss("1M/100k ratio " + std::string(at_least) + std::to_string(ratio));
    if (!(small.summary.mean_wait > 0 && (big.stopped_at > 0 || big.summary.mean_wait >= kMinWait)))
        miss("the judged runs did not queue (1M mean wait " + replay::format_duration(big.summary.mean_wait) +
             ", target >= " + replay::format_duration(kMinWait) + ")");
    std::cout << (missed.empty() ? "targets: met" : "targets: missed: " + missed) << "\n";
    return 0;
}
