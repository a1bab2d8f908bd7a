// The GPUs Slurm gave one job on each of its nodes, asked of slurmctld while the job's first
// place request waits: what lets colocd place a narrow job on several nodes as one.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace coloc::slurm {

struct JobGpus {
    std::int64_t job_id = 0;
    std::vector<std::pair<std::string, std::vector<int>>> nodes;  // node, its GPUs; node-list order
};

// From the job's node list ("n[1-2]") and its gres detail per node, in the same order. Throws
// std::runtime_error naming the job and the reason: a node list that does not expand, a detail
// per node missing, a detail that does not parse (slurm/gres_detail.hpp), a node without GPUs.
JobGpus job_gpus_from(std::int64_t job_id, const std::string& nodelist, const std::vector<std::string>& details);

// Asks slurmctld (slurm_load_job with details). Can take Slurm's MessageTimeout when slurmctld
// is slow or gone; throws std::runtime_error naming the reason.
JobGpus load_job_gpus(std::int64_t job_id);

// Bounds the wait for that answer. colocd serves requests on one thread, and the plugin waits
// for its answer only a few hundred milliseconds (then starts the job without it): the query
// runs on a thread of its own, and the serving thread waits for it no longer than it is told.
// An answer that comes later is dropped; while a query is still out, the next ask does not start
// another (slurmctld is not answering) and fails at once.
class JobGpusLookup {
public:
    using Query = std::function<JobGpus(std::int64_t job_id)>;
    explicit JobGpusLookup(Query query = load_job_gpus);
    ~JobGpusLookup();
    JobGpusLookup(const JobGpusLookup&) = delete;
    JobGpusLookup& operator=(const JobGpusLookup&) = delete;

    struct Answer {
        std::optional<JobGpus> gpus;  // set when slurmctld told in time
        std::string error;            // why not, otherwise
        double seconds = 0;           // how long the caller waited
    };
    Answer ask(std::int64_t job_id, std::chrono::milliseconds wait);

private:
    struct Pending;
    Query query_;
    std::shared_ptr<Pending> pending_;  // the query still out, if any
};

}  // namespace coloc::slurm
