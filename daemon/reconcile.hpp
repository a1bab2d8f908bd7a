// Restart reconciliation, as a pure function: what colocd believes runs, against what Slurm says
// runs. Jobs colocd holds open that Slurm has ended (or forgotten) are closed; jobs Slurm runs on
// a node where colocd never recorded them are adopted with what Slurm tells. No I/O here, so the
// rules are tested by feeding lists (tests/unit/reconcile_test.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "slurm/jobs.hpp"

namespace coloc::daemon {

inline constexpr const char* kEndedWhileAway = "ended while colocd was away";

// A placement colocd holds open (no ended report yet).
struct OpenPlacement {
    std::int64_t job_id = 0;
    std::string node;
    std::int64_t created = 0;
};

struct ReconcileOptions {
    // Slurm's answer and colocd's records are not taken at the same instant: a placement newer
    // than this (relative to the snapshot) is never closed, a Slurm job that ended more recently
    // is left to the plugin's own ended report, and a job started more recently is left to its
    // own place request.
    std::int64_t grace_s = 10;
};

struct CloseAction {
    std::int64_t job_id = 0;
    std::string node;
    std::int64_t time = 0;  // Slurm's end time, or the snapshot's time when Slurm forgot it
    std::optional<int> exit_status;
    bool job_done = false;  // the last open node of the job
};

struct AdoptAction {
    std::int64_t job_id = 0;
    std::int64_t uid = -1;
    std::string name, partition;
    std::int64_t since = 0;
    slurm::SlurmJobNode where;  // the node, and the GPUs when Slurm names them
};

struct ReconcilePlan {
    std::vector<CloseAction> close;
    std::vector<AdoptAction> adopt;
};

// `recorded(job, node)`: colocd has a placement of the job on that node, open or closed.
// `known_node(node)`: the node is in colocd's topology (others are never adopted).
ReconcilePlan plan_reconciliation(const std::vector<OpenPlacement>& open, const slurm::SlurmSnapshot& slurm,
                                  const std::function<bool(std::int64_t, const std::string&)>& recorded,
                                  const std::function<bool(const std::string&)>& known_node,
                                  const ReconcileOptions& options = {});

}  // namespace coloc::daemon
