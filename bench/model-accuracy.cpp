// model-accuracy MEASUREMENTS.csv [SECONDARY.csv]
// Accuracy of coloc's same-GPU term on measured pairs (Gavel, converted by data/gavel/make-csv),
// per GPU type, under (a) leave-one-pair-out and (b) leave-one-job-type-out cross-validation,
// next to baselines computed in the same run; zero-shot with a whole GPU type or job family held
// out (model/zero_shot.hpp) beside the simple rules; then the shared-link closed form against the
// simulator, and the hot-path cost. Last line: "targets: met" or "targets: missed: <which>".
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "bench/targets.hpp"
#include "model/coloc_model.hpp"
#include "model/defaults.hpp"
#include "model/gpu_share.hpp"
#include "model/io/measurements_csv.hpp"
#include "model/measurements.hpp"
#include "model/phase.hpp"
#include "model/validation.hpp"
#include "model/zero_shot.hpp"
#include "tests/support/phase_sim.hpp"

using namespace coloc::model;

namespace {
struct Targets {
    double v100, p100, k80;
};
const Targets kLotoTarget{0.08, 0.045, 0.045};

double target_for(const std::string& gpu) {
    return gpu == "v100" ? kLotoTarget.v100 : gpu == "p100" ? kLotoTarget.p100 : kLotoTarget.k80;
}

// Prints the table for one measurement file; appends to `missed` when `check` is set.
void accuracy_table(const std::string& path, bool check, std::vector<std::string>& missed) {
    const Measurements m = coloc::model::io::read_measurements_csv(path);
    const ProfileCatalogue cat = catalogue_from(m);
    const GpuShareParams params;
    std::printf("same-GPU normalised speed (co-located / solo), mean absolute error; data: %s\n", path.c_str());
    std::printf("%-5s %5s %5s | %-30s | %-30s\n", "gpu", "types", "obs", "(a) leave-one-pair-out",
                "(b) leave-one-job-type-out");
    std::printf("%-5s %5s %5s | %6s %6s %6s %8s | %6s %6s %6s %8s %6s\n", "", "", "", "coloc", "none", "median",
                "row/col", "coloc", "none", "median", "family", "target");
    for (const char* gpu : {"v100", "p100", "k80"}) {
        const GpuPairData d = gpu_pair_data(cat, gpu);
        if (d.types.empty()) continue;
        const CvScores a = leave_one_pair_out(d, params);
        const CvScores b = leave_one_type_out(d, params);
        const double tgt = target_for(gpu);
        std::printf("%-5s %5zu %5d | %6.4f %6.4f %6.4f %8.4f | %6.4f %6.4f %6.4f %8.4f %6.3f\n", gpu, d.types.size(),
                    d.observations(), a.coloc.value(), a.none.value(), a.median.value(), a.baseline.value(),
                    b.coloc.value(), b.none.value(), b.median.value(), b.baseline.value(), tgt);
        if (!check) continue;
        const std::string g = gpu;
        if (!(a.coloc.value() < a.baseline.value())) missed.push_back(g + " (a) not below row/col");
        const double best_baseline = std::min({b.none.value(), b.median.value(), b.baseline.value()});
        if (!(b.coloc.value() < best_baseline)) missed.push_back(g + " (b) not below every baseline");
        if (!(b.coloc.value() <= tgt)) missed.push_back(g + " (b) above " + std::to_string(tgt).substr(0, 5));
    }
}

// Zero-shot: a held-out GPU type, or family, predicted from the rest; the model must beat every
// simple rule on every held-out group.
void zero_shot_table(const char* title, const std::vector<ZeroShotScores>& rows, std::vector<std::string>& missed) {
    std::printf("\n%s: zero-shot same-GPU speed, mean absolute error (util: defaults where unknown)\n", title);
    std::printf("%-14s %5s | %6s %6s %6s %6s | %6s\n", "held out", "pairs", "coloc", "none", "median", "util", "unc");
    for (const ZeroShotScores& r : rows) {
        std::printf("%-14s %5d | %6.4f %6.4f %6.4f %6.4f | %6.4f\n", r.held_out.c_str(), r.pairs(), r.model.value(),
                    r.none.value(), r.median.value(), r.util.value(), r.uncertainty);
        const double best = std::min({r.none.value(), r.median.value(), r.util.value()});
        if (!(r.model.value() < best))
            missed.push_back(std::string(title) + " " + r.held_out + " not below every simple rule");
    }
}

void zero_shot(const std::string& path, std::vector<std::string>& missed) {
    const Measurements m = coloc::model::io::read_measurements_csv(path);
    zero_shot_table("leave one GPU type out", leave_one_gpu_type_out(m), missed);
    zero_shot_table("leave one family out", leave_one_family_out(m), missed);
}

// Shared-link closed form (phase.hpp) against the time-stepped simulator (phase_sim.hpp).
double phase_sweep(std::vector<std::string>& missed) {
    struct Worst {
        double err = 0;
        int cases = 0;
    };
    std::map<std::string, Worst> worst;
    const double dt = 1e-3, horizon = 300;
    auto run = [&](const std::string& regime, double Ta, double ba, double Tb, double bb, double offset,
                   std::optional<double> closed_offset) {
        const SimJob jobs[2] = {{Ta - ba, ba, 0.0}, {Tb - bb, bb, offset}};
        const SimResult sim = simulate_link(jobs, horizon, dt, 5);
        const Burst A{Ta, ba}, B{Tb, bb};
        double closed = 1 + link_delta(A, B, closed_offset);
        if (regime == "interleaved") closed = 1 + extra_interleaved(A, B) / Ta;
        Worst& w = worst[regime];
        w.err = std::max(w.err, std::abs(closed - sim.slowdown[0]));
        ++w.cases;
    };
    const double bursts[] = {0.05, 0.1, 0.2, 0.3, 0.4};
    for (double ba : bursts)
        for (double bb : bursts) {
            run("in-step", 1.0, ba, 1.0, bb, 0.0, std::nullopt);
            for (double off : {0.02, 0.1, 0.25, 0.6}) run("offset", 1.0, ba, 1.0, bb, off, off);
            if (ba + bb <= 1.0) run("interleaved", 1.0, ba, 1.0, bb, ba, ba);
            for (double ratio : {1.6180339887, 1.4142135624, 2.7182818285 / 2.0, 0.7071067812})
                run("drifting", 1.0, ba, ratio, bb * ratio, 0.0, std::nullopt);
        }
    // Three jobs in step: pairwise extras added up (an approximation the model documents).
    for (double b1 : {0.1, 0.2, 0.3})
        for (double b2 : {0.1, 0.2, 0.3})
            for (double b3 : {0.1, 0.2, 0.3}) {
                const SimJob jobs[3] = {{1 - b1, b1, 0.0}, {1 - b2, b2, 0.0}, {1 - b3, b3, 0.0}};
                const SimResult sim = simulate_link(jobs, horizon, dt, 5);
                const Burst A{1, b1}, B{1, b2}, C{1, b3};
                const double closed = 1 + link_delta(A, B, std::nullopt) + link_delta(A, C, std::nullopt);
                Worst& w = worst["3 in step*"];
                w.err = std::max(w.err, std::abs(closed - sim.slowdown[0]));
                ++w.cases;
            }
    std::printf("\nshared link: closed form vs time-stepped simulator (2 jobs, fair sharing, dt %.0e s, %g s)\n", dt,
                horizon);
    std::printf("%-12s %6s %18s\n", "regime", "cases", "max |error| (slowdown)");
    double max_err = 0;
    for (const auto& [name, w] : worst) {
        std::printf("%-12s %6d %18.4f\n", name.c_str(), w.cases, w.err);
        if (name.back() != '*') max_err = std::max(max_err, w.err);
    }
    std::printf("(* three or more bursts meeting: pairwise sum, a documented approximation; not a target)\n");
    if (worst["in-step"].err > 0.01 || worst["offset"].err > 0.01 || worst["interleaved"].err > 0.01)
        missed.push_back("phase closed form off the simulator (deterministic regimes)");
    if (worst["drifting"].err > 0.05) missed.push_back("phase closed form off the simulator (drifting)");
    return max_err;
}

void in_step_bounds() {
    std::printf("\nwhat interleaving can win (the model's closed form, not fitted):\n");
    // Two equal jobs, duty d: in step each is slowed by d, interleaved by 0 (d <= 1/2).
    // k equal jobs with duty 1/k: in step 1 + (k-1)/k, interleaved 1.
    for (int k : {2, 3, 4}) {
        const double d = 1.0 / k;
        const double in_step = 1 + (k - 1) * d;
        std::printf("  %d equal jobs, duty 1/%d, in step vs interleaved: %.2fx iteration time\n", k, k, in_step);
    }
    std::printf(
        "  the fair-sharing bound, 2 - 1/k for k jobs on a link, is the most interleaving can win on the\n"
        "  mean; tails also carry queueing and congestion effects the model does not represent.\n");
}

void hot_path(const std::string& path) {
    const ProfileCatalogue cat = catalogue_from(coloc::model::io::read_measurements_csv(path));
    ColocParams params;
    params.gpu_type = "v100";
    const auto t0 = std::chrono::steady_clock::now();
    const ColocModel model(cat, params);
    const auto t1 = std::chrono::steady_clock::now();
    const int n = cat.size();
    double sink = 0;
    const int calls = 1000000;
    for (int i = 0; i < calls; ++i) {
        const JobProfile& job = cat.at(1 + i % (n - 1));
        const Neighbour nb[3] = {{&cat.at(1 + (i * 7) % (n - 1)), Sharing::Gpu, std::nullopt},
                                 {&cat.at(1 + (i * 13) % (n - 1)), Sharing::Switch, std::nullopt},
                                 {&cat.at(1 + (i * 5) % (n - 1)), Sharing::Link, std::nullopt}};
        sink += model.slowdown(job, nb);
    }
    const auto t2 = std::chrono::steady_clock::now();
    JobProfile stranger = cat.at(1);
    stranger.name = "not-in-catalogue";
    stranger.id = -1;
    const int slow_calls = 20000;
    for (int i = 0; i < slow_calls; ++i) {
        const Neighbour nb[1] = {{&cat.at(1 + i % (n - 1)), Sharing::Gpu, std::nullopt}};
        sink += model.slowdown(stranger, nb);
    }
    const auto t3 = std::chrono::steady_clock::now();
    auto us = [](auto a, auto b) { return std::chrono::duration<double, std::micro>(b - a).count(); };
    std::printf(
        "\nhot path: model build (%d profiles, same-GPU cache) %.1f ms; slowdown() with 3 neighbours "
        "%.3f us/call (catalogue profiles); %.2f us/call for a profile outside the catalogue  [%g]\n",
        n, us(t0, t1) / 1000, us(t1, t2) / calls, us(t2, t3) / slow_calls, sink > 0 ? 1.0 : 0.0);
}
}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || argc > 3) {
        std::fprintf(stderr, "usage: model-accuracy MEASUREMENTS.csv [SECONDARY_MEASUREMENTS.csv]\n");
        return 2;
    }
    std::vector<std::string> missed;
    try {
        std::printf(
            "Gavel measured pairs (stanford-futuredata/gavel, MIT). Targets apply to the first table.\n"
            "coloc: kernel local-linear regression over solo features (family, batch size, throughput\n"
            "ratios across GPU types, iteration time); one set of bandwidths for all GPU types.\n\n");
        accuracy_table(argv[1], true, missed);
        zero_shot(argv[1], missed);
        if (argc == 3) {
            std::printf("\n(secondary, informational)\n");
            accuracy_table(argv[2], false, missed);
        }
        phase_sweep(missed);
        in_step_bounds();
        hot_path(argv[1]);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "model-accuracy: %s\n", e.what());
        return 1;
    }
    return coloc::bench::print_targets(missed);
}
