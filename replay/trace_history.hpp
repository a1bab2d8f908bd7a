// A Slurm log's jobs as the runs the interval regression learns from (model/run_history.hpp),
// for `colocctl fit --history` on sacct -P output. Slurm's accounting says which nodes a job
// held, not which GPUs: two jobs overlapping in time on a node are taken to share at the level
// `same_node` says (the site knows: `node` where jobs get whole GPUs, `gpu` where they share
// them through count-only slots, MPS or shards).
#pragma once

#include <vector>

#include "model/model.hpp"
#include "model/run_history.hpp"
#include "replay/trace.hpp"

namespace coloc::replay {

// Every job of `trace` that started, with the spans it overlapped others on a node it held.
// Throws TraceError naming the job's line when its NodeList is not a hostlist.
std::vector<model::JobHistory> history_from_trace(const Trace& trace, model::Sharing same_node);

}  // namespace coloc::replay
