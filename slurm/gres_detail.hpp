// One node's GRES as slurmctld details a job's allocation there (job info `gres_detail_str`,
// one string per node in node-list order). Slurm 22.05 writes, for example:
//   "gpu:2(IDX:0-1)"   "gpu:a100:1(IDX:3),gpuslot(CNT:1)"   "gpuslot(CNT:2)"   "gpu(IDX:0,2)"
// colocd trusts GPU indexes from here to place a job, so the parser is strict: anything it does
// not understand about gres/gpu is an error that says what and where. The plugin reads its bind
// slots (a count-only GRES) from here too, or from the job's tres_per_node when there is no detail.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace coloc::slurm {

struct GresDetailError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct NodeGres {
    std::vector<int> gpus;  // gres/gpu indexes, ascending; empty when the node has no gres/gpu
    int gpu_count = 0;      // gres/gpu GPUs
    int slot_count = 0;     // count-only GPU slots (gpuslot)
};

// Throws GresDetailError ("gres detail 'TEXT': REASON") for a malformed string: an empty or
// unbalanced item, a bad or repeated index, a count that disagrees with the indexes, gres/gpu
// without indexes (IDX:N/A). Other GRES (not gpu, not gpuslot) are passed over.
NodeGres parse_node_gres(std::string_view detail);

// The units of GRES `name` in one node's detail: its count ("gpuslot(CNT:3)", "gpuslot:3") or
// the number of its indexes ("gpu:2(IDX:0-1)"); 0 when absent. Throws GresDetailError when the
// string is malformed or an item of that name gives no count.
int gres_count(std::string_view detail, std::string_view name);

// The units of GRES `name` a job asked for per node in its tres_per_node, e.g. "gres:gpuslot:3",
// "gres/gpuslot:2", "gres:gpu:1,gres:gpuslot:fast:2", "gres:gpuslot" (one); 0 when absent.
// Throws GresDetailError when an entry of that name gives no count ("gres:gpuslot:a:b").
int tres_per_node_count(std::string_view tres, std::string_view name);

}  // namespace coloc::slurm
