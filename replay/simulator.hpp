// The discrete-event replay of one policy: jobs arrive, wait in a Slurm-like queue (FIFO with
// EASY backfill on the time limits), are placed by the policy, and progress at a rate set by
// the truth model given their current neighbours.
//
// Time: each job carries its solo work (seconds); while it runs, it progresses at
// 1 / truth.slowdown(job, neighbours). A start or an end changes the neighbours only of the jobs
// that share a node with the job (or, for multi-node jobs, a link): only those are advanced and
// re-rated, and only their predicted end moves in the event heap.
//
// Backfill (EASY: one reservation, for the first queued job; Slurm's backfill reserves nodes for
// every job it tests and cannot start, so this lets a later job pass waiting jobs that Slurm
// would protect, under every policy alike): when the first queued job cannot start, it gets a
// reservation at the earliest time the running jobs' time limits free enough GPUs for it (the
// shadow time); a later job may start now if the policy places it and it either ends before the
// shadow time (its time limit, stretched by the slowdown its policy predicts for it where it
// shares) or uses only GPUs the reserved job leaves over (counted in GPUs). Time limits serve
// planning only: a job slowed past its limit runs on.
// When the policy declines to place the first job although it fits (the coloc policy's
// admission limit or the sharing rule), the job waits for GPUs of its own: its reservation is
// at the earliest expected end after which enough GPUs are idle, and a later job that runs past
// it may take no more of the GPUs idle by then than it leaves over, as colocd's admission holds
// a job that would take GPUs a held job waits for: those idle now, and those shared only with
// jobs that end by then (a job sharing one keeps it from the reserved job as surely).
//
// The sharing rule sees what a scheduler sees: each job's time limit as its expected run time,
// running jobs' start + time limit as their expected ends, and the GPUs that the jobs queued
// ahead of a job ask for (those a pass has not started).
//
// Learning (SimLearning): the policy's model learns from the jobs it places as colocd's does
// (daemon/service/learning.cpp, elapsed.cpp): their iteration reports, the truth's slowdown
// with the neighbours they have times noise, go to Learner::observe, and ended jobs' elapsed
// times over their co-location intervals go through an ElapsedWindow per GPU type to
// Learner::learn_elapsed. The model's error on the pairs the policy forms is recorded as they form.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "model/elapsed_window.hpp"
#include "model/learner.hpp"
#include "model/model.hpp"
#include "place/arrival_window.hpp"
#include "place/cluster_state.hpp"
#include "place/policy.hpp"
#include "replay/workload.hpp"

namespace coloc::replay {

struct SimLearning {
    // The model the policy places by, whose error on the pairs the policy forms is recorded
    // (PolicyRun::model_error); null = none recorded. A turned-down job's verdict is asked
    // again once its version() changed.
    const model::InterferenceModel* judged = nullptr;
    // Its learner, when it learns from the jobs the policy places; null = it stays as it is.
    model::Learner* learner = nullptr;
    // A job reports its iteration time at most once per interval, as the reporting client does
    // by default (client/reporter.hpp; `colocctl replay --report-interval`). Each report reaches
    // the model when it is due, as colocd's do: a pairing teaches while it lasts.
    double report_interval_s = 30;
    // The measured slowdown: the truth's times exp(noise_sd * N(0, 1)), at least 1 (as colocd
    // takes it), drawn from a generator seeded with `seed`: a run is reproducible.
    double noise_sd = 0.03;
    std::uint64_t seed = 1;
    // Reports per job and stretch of unchanged neighbours: floor(length / interval), at most
    // this many (the first ones; with no interval, this many at the stretch's end). Reports with the same neighbours say the same thing but for the noise: more
    // would mostly cost time (a long job beside one neighbour for days would report thousands
    // of times) and weigh one pair over the others, which colocd's learner damps anyway (the
    // n-th sighting of a pair weighs 1/n^2).
    int max_reports = 3;
    // The ended runs kept per GPU type and how often they are refitted: colocd.yaml's defaults
    // (elapsed_window, elapsed_refit_every, elapsed_min_s).
    model::ElapsedWindowOptions elapsed;
    // Per node type (Neighbour::hardware): the GPU type the learner knows it as; a type beyond
    // the list (or an empty list) is named by the topology.
    std::vector<std::string> gpu_types;
};

struct SimOptions {
    // Queued jobs a backfill pass looks at (Slurm's bf_max_job_test).
    int backfill_depth = 500;
    // Slurm starts queued jobs at its scheduling passes, not the moment GPUs free: with this
    // > 0 (seconds between passes; Slurm's bf_interval where its backfill starts the jobs), a
    // pass follows each arrival and end by half of it, the expected wait for the next pass. 0:
    // a pass follows every arrival and end at once.
    double pass_interval_s = 0;
    // Called now and then with the jobs finished so far.
    std::function<void(std::size_t finished, std::size_t total)> progress;
    // Called after every batch of simultaneous events (tests check invariants with it).
    std::function<void(const place::ClusterState& state, double now)> observer;
    bool record_busy = true;  // the busy-GPU timeline (for plots and utilisation)
    // Give each request the queue's outlook (place/sharing_rule.hpp): the jobs' time limits as
    // their expected run times and ends, and the GPUs queued ahead, for the sharing rule.
    bool outlook = true;
    // What the outlook predicts running jobs' pace with (the policy's own model): a running job's
    // time left is what its time limit leaves of its work at its predicted slowdowns so far and
    // now. Null: its start plus its time limit, less the time gone.
    const model::InterferenceModel* planner = nullptr;
    SimLearning learning;
    // The share of the sharing rule's decisions that may try a pairing its margin holds back
    // (place::ExplorationBudget); 0: none. Worth it only for a policy whose model learns.
    double explore_share = 0;
    // A job joins the queue this long after its submission (its JCT still counts from it): the
    // wait for admission's release (ReplaySetup::admission_delay_s). With it > 0, a one-node job
    // submitted while no job is queued and that fits a node's idle GPUs takes colocd's standing
    // offer: it joins at once, on the node with the fewest idle GPUs that fit.
    double admission_delay_s = 0;
    bool standing_offers = true;  // colocd writes them (admission.offers_file set)
    // The arrivals the sharing rule expects are counted over this window (place::QueueDemand;
    // 0: every submission so far), as colocd counts them (admission.arrival_window_s).
    double arrival_window_s = place::kArrivalWindowS;
};

struct JobOutcome {
    double start = -1;  // -1 = never started
    double end = -1;
};

struct BusyPoint {
    double t = 0;
    int busy_gpus = 0;    // GPUs running at least one job
    int used_slots = 0;   // job slots taken (> busy_gpus when GPUs are shared)
    int shared_gpus = 0;  // GPUs holding two jobs or more
};

// The model's error on a pair the policy formed: when a job started beside neighbours on its
// GPU(s), |model speed - truth speed| for it with all its neighbours (speed = 1 / slowdown),
// the model as it was then.
struct ModelError {
    double t = 0;
    std::size_t start_rank = 0;  // jobs started before it
    double error = 0;
};

struct PolicyRun {
    std::string policy;
    std::vector<JobOutcome> jobs;  // per workload job
    std::vector<BusyPoint> busy;   // after each change
    std::size_t events = 0;        // arrivals + starts + ends
    std::size_t decisions = 0;     // placement decisions asked of the policy
    std::size_t backfilled = 0;    // jobs started ahead of an earlier one
    std::size_t declined = 0;      // jobs turned down although GPUs were free
    std::size_t unchanged = 0;     // of those, not asked again: nothing their verdict rests on changed
    std::size_t never_started = 0;
    double busy_gpu_seconds = 0;  // integral of busy GPUs over time
    double wall_s = 0;            // how long the replay took
    // With SimLearning::judged: the error on each pair formed, in start order.
    std::vector<ModelError> model_error;
    bool learned = false;     // the model learned (SimLearning::learner)
    std::size_t reports = 0;  // iteration reports it learned from
    std::size_t refits = 0;   // learn_elapsed calls
};

// `units` says what a job needs on a node: GPUs with a free slot (Open) or idle GPUs (Idle,
// for the exclusive policy); the queue plans with it.
PolicyRun simulate(const place::Topology& topology, const place::Policy& policy, place::Capacity units,
                   const model::InterferenceModel& truth, const std::vector<ReplayJob>& jobs,
                   const SimOptions& options = {});

}  // namespace coloc::replay
