// How many units of a GRES Slurm gave a job on one node, read from the job record that
// slurm_load_job() returns: no environment variable carries the count of a count-only GRES
// such as gpuslot (checked on 22.05: only TresPerNode / GresDetail in the job record).
#pragma once

#include <string_view>

namespace coloc::spank {

// From one node's gres_detail_str entry, e.g. "gpuslot(CNT:3)" or "gpu:2(IDX:0-1),gpuslot(CNT:1)".
// 0 when the GRES is absent, -1 when the entry does not parse.
int gres_count_in_detail(std::string_view detail, std::string_view name);

// From tres_per_node, e.g. "gres:gpuslot:3", "gres/gpuslot:2", "gres:gpuslot:fast:2,gres:gpu:1".
// 0 when the GRES is absent, -1 when an entry for it does not parse.
int gres_count_in_tres(std::string_view tres, std::string_view name);

}  // namespace coloc::spank
