// What slurmctld knows of the cluster's layout: its name, its nodes with their configured GPUs
// and GPU slots, and its partitions (slurm_load_node, slurm_load_partitions). colocd builds its
// node list from this instead of a copy in colocd.yaml.
#pragma once

#include <string>
#include <vector>

namespace coloc::slurm {

struct LayoutNode {
    std::string name;
    std::string gres;  // as configured, e.g. "gpu:4,gpuslot:8"
    int gpus = 0;      // gres/gpu
    int slots = 0;     // gpuslot, the count-only GRES of bind mode
};

struct LayoutPartition {
    std::string name;
    std::vector<std::string> nodes;
};

struct SlurmLayout {
    std::string cluster;  // ClusterName
    std::vector<LayoutNode> nodes;
    std::vector<LayoutPartition> partitions;
};

// Two RPCs to slurmctld; throws std::runtime_error naming what failed (slurmctld away, a Gres
// string that cannot be read).
SlurmLayout load_slurm_layout();

}  // namespace coloc::slurm
