// colocctl probe's runs through Slurm: each run's jobs are plain sbatch jobs on one node, and
// their iteration times are what they reported to colocd (coloc_report). The pairing is the
// experiment, and colocd's engine, learning as the probe goes, may prefer to double up one job
// type on a GPU: so the jobs leave colocd's choice (--coloc=off, bind mode). The plugin then gives
// each the least-occupied GPU of the node (lowest index first), and colocd records that placement
// and takes the job's reports as for any job. A pair run fills every GPU with one copy of the
// first job, then adds as many copies of the second, one beside each. Every job is cancelled on
// the way out.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "ctl/options.hpp"
#include "ctl/probe_plan.hpp"

namespace coloc::ctl::probe {

struct Target {
    std::string node, partition;           // partition "" = Slurm's default
    std::string gres = "gpu:1";            // what each job asks for (job_submit.lua makes it a slot in bind partitions)
    std::vector<std::string> sbatch_args;  // --sbatch-arg, as given
    int seconds = 300;                     // each run's command stops after this
    int warmup = 5;                        // reports left out at each job's start
    double report_interval_s = 0;          // COLOC_REPORT_INTERVAL_S of the jobs: 0 = every iteration
    std::string out_dir;                   // scripts, job output, NVML samples under out_dir/runs
};

// The node as colocd describes it.
struct NodeShape {
    int gpus = 0, slots_per_gpu = 0, jobs = 0;
};
NodeShape node_shape(const CtlOptions& opts, const std::string& node);
// Throws, naming the node and the reason, when colocd does not know it or (`pairs`) no two jobs
// can share one of its GPUs.
void check_node(const CtlOptions& opts, const std::string& node, bool pairs);

// What one run measured; `error` says why it failed ("" = it did not).
struct RunResult {
    Mean a, b;  // a's (and, for a pair, b's beside a) mean iteration time
    int copies = 0;
    std::string nvml;  // a solo run: what nvidia-smi sampled on the node ("" = nothing)
    std::string error;
};

// Set from SIGINT/SIGTERM: the current run stops, its jobs are cancelled.
extern std::atomic<bool> g_interrupted;

// Runs `run` and waits for it, within deadlines; cancels whatever of it is still queued or
// running when it returns or throws.
RunResult execute(const CtlOptions& opts, const Target& t, const std::vector<Job>& jobs, const Run& run, int index);

// The batch script of one job of a run (pure; for the tests): waits until `together` jobs of the
// run have started on the node, then runs the command for at most t.seconds, its reports sent
// every t.report_interval_s; `nvml_file` "" = no sampling.
std::string job_script(const Target& t, const Job& job, const std::string& barrier, int together,
                       const std::string& nvml_file);

}  // namespace coloc::ctl::probe
