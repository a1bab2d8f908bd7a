// bench/phase: phase synchronisation on a shared link, measured with emulated training jobs
// (tests/workload: coloc-workload over coloc-link, a fair-share link on 127.0.0.1) beside the
// model's link term (model/phase.hpp), and undone with phase offsets (model/phase_offset.hpp and
// the reporting client's alignment, client/phase_align.hpp).
//
// Each job computes (a sleep on a GPU of its own) then sends a burst of `share` of its period over
// the one link. Regimes, for 2, 3 and 4 jobs and burst shares 0.1 .. 0.5:
//   in step      all start together
//   interleaved  starts spread evenly over the period (half a period apart for two jobs)
//   drifting     periods 3 % apart (job i's period is 1.03^i times the first's)
// A job's measured slowdown is its mean iteration time while all jobs run over its time alone;
// the model's is 1 + the sum over neighbours of link_delta (pairwise composition).
// Then in step again, with each job given the offset colocd computes and aligning to it.
// Targets: model within 0.03 of measured for two jobs in every regime; offsets remove >= 80 % of
// the in-step slowdown where the bursts fit in one period together (jobs x share <= 1).
//
//   build/bench/phase [--period-ms 30] [--seconds 2] [--quick] [--jobs K] [--share S]
// Run as root the jobs get a real-time priority, so that a busy machine does not delay wake-ups.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/targets.hpp"
#include "model/phase.hpp"
#include "model/phase_offset.hpp"
#include "tests/support/phase_compose.hpp"

namespace fs = std::filesystem;
using namespace coloc::model;

namespace {

struct Setup {
    std::string build = "build";
    fs::path dir;
    int port = 0;
    double period_s = 0.030;
    double seconds = 2.0;
    int run_id = 0;
};

pid_t g_link = 0;  // coloc-link, stopped on every way out

[[noreturn]] void give_up() {
    if (g_link > 0) kill(g_link, SIGTERM);
    std::exit(1);
}

double wall_s() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env,
            const fs::path& out) {
    const pid_t pid = fork();
    if (pid != 0) return pid;
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    const int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) dup2(fd, 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    std::perror(args[0]);
    _exit(127);
}

struct Iteration {
    double dt = 0, start = 0;
};

std::vector<Iteration> read_iterations(const fs::path& p) {
    std::vector<Iteration> its;
    std::ifstream in(p);
    std::string line, word;
    long i;
    Iteration it;
    while (std::getline(in, line)) {  // "iter I SECONDS START ..." (tests/workload/workload.cpp)
        std::istringstream fields(line);
        if (fields >> word >> i >> it.dt >> it.start && word == "iter") its.push_back(it);
    }
    return its;
}

struct JobSpec {
    double compute_s = 0, burst_s = 0;
    double start_delay_s = 0;
    std::optional<double> phase_offset_s;  // opt in to alignment at this offset
    double phase_period_s = 0;             // the period colocd would assume: measured alone
};

// Mean iteration time of each job over the window in which all of them ran (after warm-up).
// `beat_share` > 0 (drifting jobs): the window is cut to whole beats, the time the relative phase
// of the first two jobs takes to come round once (their period over beat_share iterations), so
// that every relative phase is seen equally often.
std::vector<double> run_jobs(Setup& s, const std::vector<JobSpec>& jobs, double seconds, double beat_share = 0) {
    const double t0 = wall_s() + 0.3;
    std::vector<pid_t> pids;
    std::vector<fs::path> outs;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        const auto& j = jobs[i];
        char buf[64];
        std::vector<std::string> argv{s.build + "/tests/coloc-workload",
                                      "--compute-ms",
                                      std::to_string(j.compute_s * 1000),
                                      "--burst-ms",
                                      std::to_string(j.burst_s * 1000),
                                      "--link",
                                      "127.0.0.1:" + std::to_string(s.port),
                                      "--seconds",
                                      std::to_string(seconds),
                                      "--state-dir",
                                      (s.dir / "state").string()};
        std::snprintf(buf, sizeof buf, "%.6f", t0 + j.start_delay_s);
        argv.insert(argv.end(), {"--start-at", buf});
        std::vector<std::pair<std::string, std::string>> env{{"CUDA_VISIBLE_DEVICES", std::to_string(i)}};
        if (j.phase_offset_s) {
            std::snprintf(buf, sizeof buf, "%.6f", *j.phase_offset_s);
            env.insert(env.end(), {{"COLOC_PHASE_ALIGN", "1"}, {"COLOC_PHASE_OFFSET_S", buf}});
            std::snprintf(buf, sizeof buf, "%.6f", j.phase_period_s);
            env.emplace_back("COLOC_PHASE_PERIOD_S", buf);
        }
        outs.push_back(s.dir / ("run" + std::to_string(s.run_id++) + ".out"));
        pids.push_back(spawn(argv, env, outs.back()));
    }
    for (pid_t p : pids) {
        int st = 0;
        waitpid(p, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            std::fprintf(stderr, "bench/phase: a coloc-workload failed (see %s)\n", s.dir.c_str());
            give_up();
        }
    }
    std::vector<std::vector<Iteration>> its;
    double from = -1e300, to = 1e300;
    constexpr std::size_t kWarmup = 5;
    for (auto& o : outs) {
        its.push_back(read_iterations(o));
        const auto& v = its.back();
        if (v.size() < kWarmup + 3) {
            std::fprintf(stderr, "bench/phase: %s has too few iterations\n", o.c_str());
            give_up();
        }
        from = std::max(from, v[kWarmup].start);
        to = std::min(to, v.back().start);
    }
    if (beat_share > 0) {
        double sum = 0;
        int n = 0;
        for (std::size_t k = kWarmup + 1; k < its[0].size(); ++k)
            if (its[0][k - 1].start >= from && its[0][k].start <= to) {
                sum += its[0][k].start - its[0][k - 1].start;
                ++n;
            }
        const double beat = n ? sum / n / beat_share : 0;
        if (beat > 0 && to - from >= beat) to = from + std::floor((to - from) / beat) * beat;
    }
    std::vector<double> means;
    for (auto& v : its) {
        double sum = 0;
        int n = 0;
        for (std::size_t k = kWarmup + 1; k < v.size(); ++k)
            if (v[k - 1].start >= from && v[k].start <= to) {
                sum += v[k].start - v[k - 1].start;  // start to start: waits for the phase count
                ++n;
            }
        means.push_back(n ? sum / n : NAN);
    }
    return means;
}

double solo(Setup& s, double compute_s, double burst_s) {
    static std::map<std::pair<long, long>, double> cache;
    const auto key = std::make_pair(std::lround(compute_s * 1e6), std::lround(burst_s * 1e6));
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
    std::vector<double> runs;  // the median of three: one run disturbed by other load does not count
    for (int r = 0; r < 3; ++r) runs.push_back(run_jobs(s, {{compute_s, burst_s, 0, std::nullopt}}, s.seconds)[0]);
    std::sort(runs.begin(), runs.end());
    return cache[key] = runs[1];
}

void try_realtime() {
    sched_param p{};
    p.sched_priority = 5;
    if (sched_setscheduler(0, SCHED_FIFO, &p) == 0)
        std::printf("(jobs and link at real-time priority: timing is not delayed by other load)\n");
    else
        std::printf("(not root: jobs at normal priority, figures are noisier on a busy machine)\n");
}

struct Cell {
    double measured = 0, model = 0, err = 0, composed = 0, composed_err = 0;
};

}  // namespace

int main(int argc, char** argv) {
    Setup s;
    if (const char* b = std::getenv("BUILD")) s.build = b;
    bool quick = false;
    int only_jobs = 0;      // --jobs K: only K jobs
    double only_share = 0;  // --share S: only burst share S
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--period-ms" && i + 1 < argc)
            s.period_s = std::atof(argv[++i]) / 1000;
        else if (a == "--seconds" && i + 1 < argc)
            s.seconds = std::atof(argv[++i]);
        else if (a == "--quick")
            quick = true;
        else if (a == "--jobs" && i + 1 < argc)
            only_jobs = std::atoi(argv[++i]);
        else if (a == "--share" && i + 1 < argc)
            only_share = std::atof(argv[++i]);
        else {
            std::fprintf(stderr, "bench/phase: unknown argument %s\n", a.c_str());
            return 2;
        }
    }
    char tmpl[] = "/tmp/coloc-bench-phase.XXXXXX";
    if (!mkdtemp(tmpl)) return 1;
    s.dir = tmpl;
    try_realtime();
    const double rate = 20e6;
    const pid_t link = g_link = spawn(
        {s.build + "/tests/coloc-link", "--rate", std::to_string(long(rate)), "--port-file", (s.dir / "port").string()},
        {}, s.dir / "link.out");
    for (int i = 0; i < 50 && !s.port; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        std::ifstream in(s.dir / "port");
        in >> s.port;
    }
    if (!s.port) {
        std::fprintf(stderr, "bench/phase: coloc-link did not start\n");
        give_up();
    }
    const double T = s.period_s;
    std::vector<double> shares = quick ? std::vector<double>{0.2, 0.4} : std::vector<double>{0.1, 0.2, 0.3, 0.4, 0.5};
    std::vector<int> counts = quick ? std::vector<int>{2, 3} : std::vector<int>{2, 3, 4};
    if (only_jobs) counts = {only_jobs};
    if (only_share > 0) shares = {only_share};
    const char* regimes[] = {"in-step", "interleaved", "drifting"};
    std::printf("period %.0f ms, link %.0f MB/s, %.1f s per run\n\n", T * 1000, rate / 1e6, s.seconds);
    std::printf("model: pairwise sum of link_delta (what colocd adds up); composed: phase_compose.hpp\n");
    std::printf("%-12s %4s %6s %9s %9s %7s %9s %7s\n", "regime", "jobs", "share", "measured", "model", "|err|",
                "composed", "|err|");

    std::map<std::string, double> worst2, worst3;    // max error per regime: 2 jobs, 3+ jobs
    std::map<std::string, double> worst2c, worst3c;  // the same for the composed link term
    std::map<std::pair<int, double>, double> in_step;
    std::vector<std::string> missed;
    for (const char* regime : regimes)
        for (int k : counts)
            for (double share : shares) {
                std::vector<JobSpec> jobs;
                std::vector<Burst> bursts;  // the model's input: each job's period measured alone
                const bool drifting = std::string(regime) == "drifting";
                for (int i = 0; i < k; ++i) {
                    const double Ti = drifting ? T * std::pow(1.03, i) : T;
                    const double b = share * T;
                    JobSpec j{Ti - b, b, 0, std::nullopt};
                    if (std::string(regime) == "interleaved") j.start_delay_s = T * i / k;
                    jobs.push_back(j);
                    // Measured alone once per share; drifting jobs' periods in their nominal ratio, so
                    // that noise in a measurement cannot make periods 3 % apart look equal.
                    bursts.push_back({solo(s, T - b, b) * Ti / T, b});
                }
                // Drifting: at least two beats of the first two jobs (1 / 0.03 iterations each).
                const double secs = drifting ? std::max(s.seconds, 2.2 * T * (1 + (k - 1) * share) / 0.03) : s.seconds;
                // Two jobs (the targets): the median of three runs by their mean, so that one run
                // disturbed by other load on the machine does not decide.
                std::vector<std::vector<double>> runs;
                for (int r = 0; r < (k == 2 ? 3 : 1); ++r) runs.push_back(run_jobs(s, jobs, secs, drifting ? 0.03 : 0));
                auto total = [](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); };
                std::sort(runs.begin(), runs.end(), [&](const auto& a, const auto& b) { return total(a) < total(b); });
                const auto means = runs[runs.size() / 2];
                Cell c;
                std::vector<LinkJob> link_jobs;
                for (int i = 0; i < k; ++i) {
                    std::optional<double> at;
                    if (std::string(regime) == "interleaved") at = jobs[i].start_delay_s;
                    link_jobs.push_back({bursts[i], at});
                }
                const auto composed = composed_link_extra(link_jobs);
                for (int i = 0; i < k; ++i) {
                    const double measured = means[i] / bursts[i].period_s;
                    double model = 1;
                    for (int j = 0; j < k; ++j) {
                        if (j == i) continue;
                        std::optional<double> offset;
                        if (std::string(regime) == "interleaved")
                            offset = jobs[j].start_delay_s - jobs[i].start_delay_s;
                        model += link_delta(bursts[i], bursts[j], offset);
                    }
                    c.measured += measured / k;
                    c.model += model / k;
                    c.err = std::max(c.err, std::abs(model - measured));
                    const double with_composition = 1 + composed[i] / bursts[i].period_s;
                    c.composed += with_composition / k;
                    c.composed_err = std::max(c.composed_err, std::abs(with_composition - measured));
                }
                if (std::string(regime) == "in-step") in_step[{k, share}] = c.measured;
                auto& w = k == 2 ? worst2[regime] : worst3[regime];
                w = std::max(w, c.err);
                auto& wc = k == 2 ? worst2c[regime] : worst3c[regime];
                wc = std::max(wc, c.composed_err);
                std::printf("%-12s %4d %6.2f %9.3f %9.3f %7.3f %9.3f %7.3f\n", regime, k, share, c.measured, c.model,
                            c.err, c.composed, c.composed_err);
                std::fflush(stdout);
            }
    std::printf("\nmax |model - measured| per job (slowdown)\n%-12s %9s %9s %14s %14s\n", "regime", "2 jobs", "3+ jobs",
                "composed 2", "composed 3+");
    for (const char* regime : regimes) {
        std::printf("%-12s %9.3f %9.3f %14.3f %14.3f\n", regime, worst2[regime], worst3[regime], worst2c[regime],
                    worst3c[regime]);
        if (worst2[regime] > 0.03) missed.push_back(std::string("model error for two jobs ") + regime);
    }
    std::printf(
        "(3+ jobs are not a target. Interleaved 3+ jobs left alone do not hold their offsets: where two\n"
        " bursts meet, those two jobs slow and the others drift into them, so the set falls towards in\n"
        " step, which a term for fixed offsets does not follow; held by alignment, below, they stay.)\n");

    std::printf("\nin step, with the offsets colocd computes (jobs opt in to alignment)\n");
    std::printf("%4s %6s %9s %9s %9s  %s\n", "jobs", "share", "without", "with", "removed", "offsets (ms)");
    for (int k : counts)
        for (double share : shares) {
            const double b = share * T;
            // The period colocd knows is the one observed: the job's iteration time alone, with
            // whatever this machine adds to each iteration (a grid shorter than that never holds).
            const Burst burst{solo(s, T - b, b), b};
            std::vector<PhasedBurst> placed;
            std::vector<JobSpec> jobs;
            std::string offsets;
            for (int i = 0; i < k; ++i) {
                const double o = interleave_offset(burst, placed);
                placed.push_back({burst, o});
                jobs.push_back({T - b, b, 0, o, burst.period_s});
                offsets += (i ? " " : "") + std::to_string(std::lround(o * 1000));
            }
            const bool fits = k * share <= 1 + 1e-9;
            // Where the target applies, the median of three runs (one disturbed run does not decide).
            std::vector<double> withs;
            for (int r = 0; r < (fits ? 3 : 1); ++r) {
                const auto means = run_jobs(s, jobs, s.seconds);
                double w = 0;
                for (int i = 0; i < k; ++i) w += means[i] / solo(s, T - b, b) / k;
                withs.push_back(w);
            }
            std::sort(withs.begin(), withs.end());
            const double with = withs[withs.size() / 2];
            const double without = in_step[{k, share}];
            const double removed = without > 1 ? (without - with) / (without - 1) : 0;
            std::printf("%4d %6.2f %9.3f %9.3f %8.0f%%  %s%s\n", k, share, without, with, removed * 100,
                        offsets.c_str(), fits ? "" : "  (bursts do not fit in one period)");
            if (fits && removed < 0.8)
                missed.push_back("offsets removed " + std::to_string(std::lround(removed * 100)) + "% for " +
                                 std::to_string(k) + " jobs at share " + std::to_string(share).substr(0, 3));
        }
    kill(link, SIGTERM);
    waitpid(link, nullptr, 0);
    std::ifstream la("/proc/loadavg");
    std::string l1, l5, l15;
    la >> l1 >> l5 >> l15;
    std::printf("\nload average: %s %s %s\n", l1.c_str(), l5.c_str(), l15.c_str());
    fs::remove_all(s.dir);
    return coloc::bench::print_targets(missed);
}
