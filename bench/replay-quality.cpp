// bench/replay-quality: does coloc's placement shorten jobs on work it was never tuned for,
// judged by measured interference rather than by its own model?
//
// A matrix: traces x offered loads x GPU types, each cell replayed under every policy.
//   traces: Gavel's Philly-derived trace (../shared/data/gavel), Tiresias' sample trace
//           (../shared/data/tiresias), and two synthetic shapes (replay/synthetic.hpp): many
//           short one-GPU jobs with a heavy tail, and one dominated by large multi-GPU jobs;
//   offered loads: 0.5, 1, 1.5, 2 (GPU time asked for over the arrival span, per GPU);
//   truth: Gavel's measured same-GPU pairs on V100, P100, K80 in turn; coloc's model is fitted
//          on Gavel's measurements with every pair on that type left out (it never saw them);
//   policies: exclusive, slurm, pack, spread (the baselines); coloc, learning on, no measured
//             pairs of this GPU type at the start (its model learns from the jobs it places, as
//             colocd's does: their iteration reports and ended jobs' elapsed times); coloc-nolearn
//             (the same model, learning off); and oracle (coloc's engine and sharing rule placing by
//             the truth itself: what a better model would still win).
// The cluster: 16 nodes x 4 GPUs, 2 slots per GPU. A cell is loaded when the best baseline's
// mean wait is at least 10 % of its mean JCT. Targets:
//   (a) in no cell coloc's mean JCT exceeds the best baseline's by more than 2 %;
//   (b) over loaded cells, the geometric mean of coloc / best baseline is at most 0.80, and in
//       each loaded cell coloc is at most 0.85 x exclusive (a cell where the oracle is above
//       that too is marked "(oracle too)": there the target is out of reach of perfect knowledge);
//   (c) in every cell coloc's p99 JCT is at most 1.1 x the best baseline's p99 (the baseline
//       with the lowest mean JCT); a cell where the oracle's p99 is above that too is marked
//       "(oracle too)": the tail comes from the engine and rule, which perfect knowledge keeps;
//   (d) averaged over loaded cells, coloc's relative mean-JCT gain over exclusive is at least
//       70 % of the oracle's;
//   (e) learning: over the cells where both tenths have pairs, the mean of coloc's model error
//       (|model speed - truth speed|) on the pairs it formed in the last tenth of the jobs (by
//       start order) is at most half the mean in the first tenth (the cells that miss are listed);
//   (f) in no cell the oracle's mean JCT exceeds the best baseline's: a rule that may always
//       decline to share, knowing the true speeds, must never do worse than not sharing. A cell
//       where the oracle slowed no job is marked "(shared nothing)": there it lost by where it
//       put jobs on idle GPUs, not by a decision to share.
// Prints the matrix and writes a heat map of coloc / best baseline ($BUILD/replay-quality.svg).
// The synthetic traces are sized so that the whole matrix fits the time budget.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
#include <iostream>
#include <map>
#include <sstream>

#include "model/coloc_model.hpp"
#include "model/io/gavel_json.hpp"
#include "replay/gavel_throughputs.hpp"
#include "replay/measured_truth.hpp"
#include "replay/readers.hpp"
#include "replay/replay.hpp"
#include "replay/synthetic.hpp"

using namespace coloc;

namespace {

constexpr const char* kGavelTrace = "../shared/data/gavel/msr_seed0_6214e9.trace";
constexpr const char* kTiresiasTrace = "../shared/data/tiresias/60_job.csv";
constexpr const char* kThroughputs = "../shared/data/gavel/simulation_throughputs.json";
constexpr double kLoads[] = {0.5, 1.0, 1.5, 2.0};
constexpr const char* kTypes[] = {"v100", "p100", "k80"};
const std::vector<std::string> kBaselines = {"exclusive", "slurm", "pack", "spread"};
constexpr double kBudgetS = 60;      // the whole matrix
constexpr double kLoadedWait = 0.1;  // a loaded cell: best baseline's mean wait / mean JCT
constexpr double kWorseAtMost = 1.02, kGeoMeanAtMost = 0.80, kVsExclusiveAtMost = 0.85, kP99AtMost = 1.1,
                 kOracleShare = 0.7, kLearnedAtMost = 0.5;
constexpr std::size_t kSyntheticJobs = 1500;

struct TraceCase {
    std::string name;
    replay::Trace trace;
    bool gavel_run_times = false;  // run times per GPU type from Gavel's throughputs
};

struct Cell {
    std::string trace, type;
    double offered = 0;
    std::map<std::string, replay::Summary> by_policy;
    std::string best;  // the baseline with the lowest mean JCT
    bool loaded = false;
    double coloc_vs_best() const { return by_policy.at("coloc").mean_jct / by_policy.at(best).mean_jct; }
    double ratio(const std::string& p, const std::string& to) const {
        return by_policy.at(p).mean_jct / by_policy.at(to).mean_jct;
    }
    double p99_vs_best(const std::string& p = "coloc") const {
        return by_policy.at(p).p99_jct / by_policy.at(best).p99_jct;
    }
};

replay::Trace synthetic(std::vector<std::pair<int, double>> sizes, int max_gpus, double median_s, double sigma) {
    replay::SyntheticOptions o;
    o.jobs = kSyntheticJobs;
    o.seed = 7;
    o.cluster_gpus = 64;
    o.offered_load = 1.0;  // rescaled per cell like the other traces
    o.sizes = std::move(sizes);
    o.max_gpus = max_gpus;
    o.median_run_s = median_s;
    o.sigma = sigma;
    return replay::synthetic_trace(o);
}

// Green below 1 (coloc shorter than the best baseline), red above.
std::string colour(double r) {
    const double x = std::clamp((r - 1) / 0.3, -1.0, 1.0);
    const int red = x > 0 ? 255 : static_cast<int>(255 * (1 + x)),
              green = x < 0 ? 255 : static_cast<int>(255 * (1 - x));
    char buf[16];
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", red, green, std::min(red, green));
    return buf;
}

std::string heat_map(const std::vector<Cell>& cells) {
    std::vector<std::string> rows;
    for (const Cell& c : cells)
        if (std::find(rows.begin(), rows.end(), c.trace + " / " + c.type) == rows.end())
            rows.push_back(c.trace + " / " + c.type);
    const int w = 90, h = 26, left = 220, top = 40;
    std::ostringstream s;
    s << "<svg xmlns='http://www.w3.org/2000/svg' width='" << left + 4 * w + 20 << "' height='"
      << top + h * static_cast<int>(rows.size()) + 20 << "' font-family='sans-serif' font-size='12'>\n"
      << "<text x='4' y='16'>coloc mean JCT / best baseline's (bold: loaded cell)</text>\n";
    for (int i = 0; i < 4; ++i)
        s << "<text x='" << left + i * w + 20 << "' y='" << top - 6 << "'>load " << kLoads[i] << "</text>\n";
    for (std::size_t r = 0; r < rows.size(); ++r)
        s << "<text x='4' y='" << top + static_cast<int>(r) * h + 17 << "'>" << rows[r] << "</text>\n";
    for (const Cell& c : cells) {
        const int r = static_cast<int>(std::find(rows.begin(), rows.end(), c.trace + " / " + c.type) - rows.begin());
        const int col =
            static_cast<int>(std::find(std::begin(kLoads), std::end(kLoads), c.offered) - std::begin(kLoads));
        const double v = c.coloc_vs_best();
        s << "<rect x='" << left + col * w << "' y='" << top + r * h << "' width='" << w - 2 << "' height='" << h - 2
          << "' fill='" << colour(v) << "'/>\n<text x='" << left + col * w + 24 << "' y='" << top + r * h + 17 << "'"
          << (c.loaded ? " font-weight='bold'" : "") << ">" << std::to_string(v).substr(0, 4) << "</text>\n";
    }
    s << "</svg>\n";
    return s.str();
}

// The cells of one GPU type as truth: its own model and truth, so that the types run side by side.
struct TypeCells {
    std::string header;
    std::vector<Cell> cells;
};

TypeCells cells_on(const char* type, const std::vector<TraceCase>& traces, const place::Topology& topo) {
    TypeCells out;
    model::Measurements m = model::io::read_gavel_json(kThroughputs);
    const std::size_t all_pairs = m.pairs.size();
    std::erase_if(m.pairs, [&](const model::PairMeasurement& p) { return p.gpu_type == type; });
    model::ColocParams params;
    params.gpu_type = type;
    model::ColocModel coloc_model(model::catalogue_from(m), params);
    replay::MeasuredTruth truth(replay::load_pair_table(kThroughputs, type));
    char line[160];
    std::snprintf(line, sizeof line,
                  "truth %s: Gavel's %zu measured pairs; model fitted on %zu of %zu pairs (none on %s)\n", type,
                  truth.table().measured(), m.pairs.size(), all_pairs, type);
    out.header = line;
    replay::ReplaySetup setup;
    setup.topology = &topo;
    setup.model = &coloc_model;
    setup.truth = &truth;
    setup.policies = kBaselines;
    setup.policies.insert(setup.policies.end(), {"coloc", "coloc-nolearn", "oracle"});
    setup.sim.record_busy = false;
    for (const TraceCase& tc : traces) {
        replay::Trace trace = tc.trace;
        if (tc.gavel_run_times) replay::resolve_gavel_run_times(trace, type);
        replay::ProfileCounts counts;
        auto profiles = replay::assign_profiles(trace, coloc_model.catalogue(), nullptr, 1, counts);
        replay::Workload base = replay::build_workload(trace, profiles, counts, topo, {1.0});
        double gpu_seconds = 0;
        for (const auto& j : base.jobs) gpu_seconds += j.gpus() * j.work;
        const double span = base.jobs.back().submit - base.jobs.front().submit;
        const double offered_at_1 = gpu_seconds / (span * topo.total_gpus());
        for (double offered : kLoads) {
            replay::Workload w = replay::build_workload(trace, profiles, counts, topo, {offered / offered_at_1});
            replay::ReplayResult r = replay::run_replay(w, setup);
            Cell c{tc.name, type, offered, {}, "", false};
            for (const auto& s : r.summaries) c.by_policy[s.policy] = s;
            c.best = kBaselines.front();
            for (const auto& b : kBaselines)
                if (c.by_policy[b].mean_jct < c.by_policy[c.best].mean_jct) c.best = b;
            const replay::Summary& best = c.by_policy[c.best];
            c.loaded = best.mean_wait >= kLoadedWait * best.mean_jct;
            out.cells.push_back(std::move(c));
        }
    }
    return out;
}

}  // namespace

int main() {
    try {
        for (const char* f : {kGavelTrace, kTiresiasTrace, kThroughputs})
            if (!std::ifstream(f)) {
                std::cout << "replay-quality: needs " << f
                          << " (../shared beside the clone)\ntargets: missed: data not found\n";
                return 1;
            }
        const auto t0 = std::chrono::steady_clock::now();
        std::vector<TraceCase> traces;
        traces.push_back({"gavel", replay::read_trace_file(kGavelTrace, replay::TraceFormat::Gavel), true});
        traces.push_back({"tiresias", replay::read_trace_file(kTiresiasTrace, replay::TraceFormat::Tiresias), false});
        traces.push_back({"short-1gpu", synthetic({{1, 1.0}}, 1, 600, 2.0), false});
        traces.push_back(
            {"large-multi", synthetic({{4, 0.2}, {8, 0.3}, {16, 0.3}, {32, 0.2}}, 32, 4 * 3600, 1.0), false});
        auto topo = place::uniform_topology(16, 4, 2, 2, 16);
        std::printf(
            "replay-quality: %zu traces x %zu loads x %zu GPU types on 16 nodes x 4 GPUs (2 slots per GPU); "
            "synthetic traces %zu jobs each; budget %.0f s on 2 cores\n",
            traces.size(), std::size(kLoads), std::size(kTypes), kSyntheticJobs, kBudgetS);

        // Each GPU type on a thread of its own (the 2 cores the budget is for).
        std::vector<std::future<TypeCells>> by_type;
        for (const char* type : kTypes)
            by_type.push_back(std::async(std::launch::async, cells_on, type, std::cref(traces), std::cref(topo)));
        std::vector<Cell> cells;
        for (auto& f : by_type) {
            TypeCells t = f.get();
            std::printf("%s", t.header.c_str());
            for (Cell& c : t.cells) cells.push_back(std::move(c));
        }

        std::printf("\n%-12s %-5s %-4s %-3s %9s %9s %9s %9s %9s %9s %9s  %-9s %10s %9s %10s %9s %9s\n", "trace", "gpu",
                    "load", "ldd", "exclusive", "slurm", "pack", "spread", "coloc", "nolearn", "oracle", "best",
                    "coloc/best", "p99/best", "oracle/best", "MAE 1st", "MAE last");
        std::string missed_a, missed_b, missed_c, missed_e, missed_f;
        double first_sum = 0, last_sum = 0;
        int learned_cells = 0;
        double log_sum = 0, gain = 0, oracle_gain = 0;
        int loaded = 0;
        for (const Cell& c : cells) {
            std::printf("%-12s %-5s %-4.1f %-3s", c.trace.c_str(), c.type.c_str(), c.offered, c.loaded ? "yes" : "no");
            for (const char* p : {"exclusive", "slurm", "pack", "spread", "coloc", "coloc-nolearn", "oracle"})
                std::printf(" %9s", replay::format_duration(c.by_policy.at(p).mean_jct).c_str());
            // coloc's model error on the pairs it formed, first and last tenth of the jobs.
            const replay::ModelErrorTenths& e = c.by_policy.at("coloc").model_error;
            std::printf("  %-9s %10.3f %9.3f %10.3f %9.4f %9.4f\n", c.best.c_str(), c.coloc_vs_best(), c.p99_vs_best(),
                        c.ratio("oracle", c.best), e.first_mae, e.last_mae);
            const std::string where = c.trace + "/" + c.type + "@" + std::to_string(c.offered).substr(0, 3);
            if (e.first_pairs > 0 && e.last_pairs > 0) {
                ++learned_cells;
                first_sum += e.first_mae;
                last_sum += e.last_mae;
                if (e.last_mae > kLearnedAtMost * e.first_mae) missed_e += (missed_e.empty() ? "" : " ") + where;
            }
            if (c.coloc_vs_best() > kWorseAtMost) missed_a += (missed_a.empty() ? "" : " ") + where;
            if (c.ratio("oracle", c.best) > 1.0) {
                missed_f += (missed_f.empty() ? "" : " ") + where;
                // No job slowed: the oracle shared nothing, and lost by its choice among idle GPUs
                // (best fit with the fragmentation price against first fit), not by its sharing rule.
                if (c.by_policy.at("oracle").mean_slowdown <= 1 + 1e-9) missed_f += " (shared nothing)";
            }
            if (c.p99_vs_best() > kP99AtMost) {
                missed_c += (missed_c.empty() ? "" : " ") + where;
                if (c.p99_vs_best("oracle") > kP99AtMost)
                    missed_c += " (oracle too: " + std::to_string(c.p99_vs_best("oracle")).substr(0, 5) + ")";
            }
            if (!c.loaded) continue;
            ++loaded;
            log_sum += std::log(c.coloc_vs_best());
            if (c.ratio("coloc", "exclusive") > kVsExclusiveAtMost) {
                missed_b += (missed_b.empty() ? "" : " ") + where;
                // Beyond perfect knowledge: the oracle, which may always decline to share, does
                // no better there (exclusive is close to the best any placement does).
                if (c.ratio("oracle", "exclusive") > kVsExclusiveAtMost) missed_b += " (oracle too)";
            }
            gain += 1 - c.ratio("coloc", "exclusive");
            oracle_gain += 1 - c.ratio("oracle", "exclusive");
        }
        const double geo = loaded ? std::exp(log_sum / loaded) : 1.0;
        const double share = oracle_gain > 0 ? gain / oracle_gain : 1.0;
        const double first_mae = learned_cells ? first_sum / learned_cells : 0.0,
                     last_mae = learned_cells ? last_sum / learned_cells : 0.0;
        const bool learned = learned_cells > 0 && last_mae <= kLearnedAtMost * first_mae;
        const char* dir = std::getenv("BUILD");
        const std::string svg = std::string(dir && *dir ? dir : "build") + "/replay-quality.svg";
        std::ofstream(svg) << heat_map(cells);
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf("\nheat map: %s\n", svg.c_str());
        std::printf("(a) cells where coloc > %.2f x best baseline: %s\n", kWorseAtMost,
                    missed_a.empty() ? "none" : missed_a.c_str());
        std::printf(
            "(b) %d loaded cells: geometric mean coloc/best %.3f (target <= %.2f); loaded cells with coloc > "
            "%.2f x exclusive: %s\n",
            loaded, geo, kGeoMeanAtMost, kVsExclusiveAtMost, missed_b.empty() ? "none" : missed_b.c_str());
        std::printf("(c) cells where coloc's p99 > %.1f x best baseline's: %s\n", kP99AtMost,
                    missed_c.empty() ? "none" : missed_c.c_str());
        std::printf(
            "(d) mean gain over exclusive in loaded cells: coloc %.1f%%, oracle %.1f%%: %.0f%% of the oracle's "
            "(target >= %.0f%%)\n",
            loaded ? 100 * gain / loaded : 0.0, loaded ? 100 * oracle_gain / loaded : 0.0, 100 * share,
            100 * kOracleShare);
        std::printf(
            "(e) learning: %d cells with pairs in both tenths: coloc's mean model error %.4f in the first tenth, %.4f "
            "in the last (%.2f x; target <= %.2f x); cells where the last tenth's > %.2f x the first's: %s\n",
            learned_cells, first_mae, last_mae, first_mae > 0 ? last_mae / first_mae : 0.0, kLearnedAtMost,
            kLearnedAtMost, missed_e.empty() ? "none" : missed_e.c_str());
        std::printf("(f) cells where the oracle > 1.00 x best baseline: %s\n",
                    missed_f.empty() ? "none" : missed_f.c_str());
        std::printf("%.1f s in all (budget %.0f s)\n", secs, kBudgetS);
        std::string missed;
        auto miss = [&](const std::string& what) { missed += (missed.empty() ? "" : ", ") + what; };
        if (!missed_a.empty()) miss("(a) in " + missed_a);
        if (geo > kGeoMeanAtMost) miss("(b) geometric mean " + std::to_string(geo).substr(0, 5));
        if (!missed_b.empty()) miss("(b) vs exclusive in " + missed_b);
        if (!missed_c.empty()) miss("(c) in " + missed_c);
        if (share < kOracleShare) miss("(d) " + std::to_string(100 * share).substr(0, 4) + "% of the oracle's gain");
        if (!learned)
            miss("(e) last tenth's model error " +
                 std::to_string(first_mae > 0 ? last_mae / first_mae : 0.0).substr(0, 4) + " x the first's");
        if (!missed_f.empty()) miss("(f) oracle in " + missed_f);
        if (secs > kBudgetS) miss("time " + std::to_string(secs).substr(0, 5) + " s");
        std::cout << (missed.empty() ? "targets: met" : "targets: missed: " + missed) << "\n";
        return 0;
    } catch (const std::exception& e) {
        std::cout << "replay-quality: " << e.what() << "\ntargets: missed: error\n";
        return 1;
    }
}
