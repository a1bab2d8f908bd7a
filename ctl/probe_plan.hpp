// colocctl probe's pure parts: the jobs it was given, the runs it plans (each job alone, each
// pair on one GPU, within --max-pairs), the mean iteration times it takes from colocd's reports,
// and the measurements `colocctl fit` reads. No Slurm, no daemon: the unit tests drive these.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/measurements.hpp"

namespace coloc::ctl::probe {

struct Job {
    std::string name;     // the job type: its profile's name in the outputs
    std::string command;  // run by bash on the node; it reports its iterations (coloc_report)
};

// "NAME=COMMAND". Throws std::invalid_argument naming the argument and what is wrong.
Job parse_job(const std::string& arg);
// At least one job, names unique. Throws std::invalid_argument naming the duplicate.
void check_jobs(const std::vector<Job>& jobs);

struct Run {
    bool pair = false;
    int a = 0;                                              // index into the jobs
    int b = -1;                                             // the neighbour of a pair; -1 for a solo run
    std::string label(const std::vector<Job>& jobs) const;  // "solo dense", "pair dense+light"
};

// Every job alone first (a pair's speeds need both solo times), then the pairs of distinct jobs
// in the order given, at most `max_pairs` of them (< 0: all).
std::vector<Run> plan_runs(const std::vector<Job>& jobs, int max_pairs);

// One report colocd stored for a job: its mean iteration time and whether colocd saw a neighbour
// on the job's GPU then.
struct Report {
    double iter_time_s = 0;
    bool beside_on_gpu = false;
};
// The reports of `colocctl history JOB --json`'s "observations", in order.
std::vector<Report> reports_from(const nlohmann::json& observations);

// What a run measured of one job (over all its copies): the mean iteration time of the reports
// that count and how many counted.
struct Mean {
    double sum_s = 0;
    int count = 0;
    double mean_s() const;  // NaN when nothing counted
};
// Adds one copy's reports: its first `warmup` are left out (start-up, caches, the first
// neighbour's arrival), then those taken as the run meant it: beside a neighbour on the GPU for
// a pair, with none there for a solo run.
void add_reports(Mean& m, const std::vector<Report>& reports, int warmup, bool pair);

// A pair's result: the mean iteration time of each job of it beside the other.
struct PairResult {
    int a = 0, b = 0;
    Mean a_beside_b, b_beside_a;
};

// The fit CSV's rows (man coloc-profiles, MEASUREMENTS): a solo row per job with a solo time,
// one row per job of each pair whose both jobs have one. Throughput is iterations per second.
model::Measurements measurements_from(const std::vector<Job>& jobs, const std::vector<Mean>& solo,
                                      const std::vector<PairResult>& pairs, const std::string& gpu_type);

// A job's speed beside a neighbour: its solo mean iteration time over its mean in the pair.
double speed(const Mean& solo, const Mean& beside);

// Utilisation samples of `nvidia-smi --query-gpu=utilization.gpu,utilization.memory
// --format=csv,noheader,nounits`, one "SM, MEM" line (percent) per sample: their means as
// fractions, the first sample left out (the job starting). nullopt without a usable sample.
struct Utilisation {
    double sm = 0, mem = 0;
    int samples = 0;
};
std::optional<Utilisation> parse_nvidia_smi(const std::string& text);

}  // namespace coloc::ctl::probe
