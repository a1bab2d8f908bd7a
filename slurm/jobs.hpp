// What Slurm says runs where, from one libslurm query (slurm_load_jobs), for reconciliation.
// The query may take up to Slurm's MessageTimeout when slurmctld is slow or gone, so colocd
// runs it off the request path (see daemon/service/background_query.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace coloc::slurm {

// One node of a job: Slurm's GPUs there when gres/gpu names them (IDX), else only a count.
struct SlurmJobNode {
    std::string node;
    std::vector<int> gpus;  // gres/gpu indices; empty = Slurm did not say (e.g. count-only slots)
    int gpu_count = 0;      // gres/gpu or count-only slots (gpuslot) on this node
};

struct SlurmJob {
    std::int64_t job_id = 0;
    std::int64_t uid = -1;
    std::string name, partition;
    bool running = false;            // RUNNING or SUSPENDED: holds its nodes
    bool completing = false;         // ended, its processes still being stopped (squeue's CG)
    std::int64_t start_time = 0;     // epoch seconds; 0 = not started
    std::int64_t end_time = 0;       // epoch seconds; 0 = not ended
    std::optional<int> exit_status;  // for ended jobs
    std::vector<SlurmJobNode> nodes;
    // For elastic slots (daemon/steering/elastic_slots.hpp): what a pending job asks for and
    // when a running one is expected to end.
    bool pending = false;
    std::int64_t time_limit_s = 0;  // 0 = none known (INFINITE or unset)
    std::uint32_t priority = 0;     // Slurm's; higher starts first
    std::int64_t submit_time = 0;
    int nodes_wanted = 1;          // pending: the node count it asks for
    std::string tres_per_node;     // "gres:gpuslot:2"
    std::string required_nodes;    // --nodelist, "n1" or "n[1-2]"; empty = any
    std::string admin_comment;     // job_submit.lua writes "coloc_profile=NAME" here
    bool waits_for_begin = false;  // pending until its BeginTime (squeue's reason BeginTime)
};

struct SlurmSnapshot {
    std::int64_t taken_at = 0;    // when slurmctld answered (epoch seconds)
    std::int64_t updated_at = 0;  // slurmctld's time of this job table, to ask "changed since?"
    std::vector<SlurmJob> jobs;   // every job slurmctld still knows, running or not
};

// Asks slurmctld (through SLURM_CONF or the default slurm.conf). Throws std::runtime_error
// naming the reason when there is no slurm.conf or slurmctld does not answer.
SlurmSnapshot load_slurm_jobs();
// The same, but nullopt when no job changed since `updated_at` (a snapshot's): slurmctld then
// answers without packing its job table, so asking often costs it little. 0 = always a snapshot.
std::optional<SlurmSnapshot> load_slurm_jobs_changed_since(std::int64_t updated_at);

// "gpu:2(IDX:0-1)", "gpu:a100:1(IDX:3),gpuslot(CNT:1)", "gpuslot(CNT:2)": the GPUs and the
// count on one node (slurm/gres_detail.hpp); nothing when the detail does not parse.
SlurmJobNode parse_gres_detail(const std::string& node, const std::string& detail);

}  // namespace coloc::slurm
