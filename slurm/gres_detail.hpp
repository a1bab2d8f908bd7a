// One node's GRES as slurmctld details a job's allocation there (job info `gres_detail_str`,
// one string per node in node-list order). Slurm 22.05 writes, for example:
//   "gpu:2(IDX:0-1)"   "gpu:a100:1(IDX:3),gpuslot(CNT:1)"   "gpuslot(CNT:2)"   "gpu(IDX:0,2)"
// colocd trusts GPU indexes from here to place a job, so the parser is strict: anything it does
// not understand about gres/gpu is an error that says what and where.
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

}  // namespace coloc::slurm
