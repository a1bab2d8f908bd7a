// A node's weight and features as slurmctld holds them, read and written through libslurm
// (slurm_load_node_single, slurm_update_node). Node steering (daemon/steering/) decides what to set.
#pragma once

#include <cstdint>
#include <string>

namespace coloc::slurm {

// A node's settings as Slurm reports them.
struct SlurmNodeSettings {
    std::uint32_t weight = 1;
    std::string features;         // AvailableFeatures, comma-separated
    std::string active_features;  // ActiveFeatures, comma-separated
};

// One RPC each; false with `why` set when Slurm refuses or cannot be reached.
bool load_slurm_node(const std::string& node, SlurmNodeSettings& out, std::string& why);
bool update_slurm_node(const std::string& node, const SlurmNodeSettings& settings, std::string& why);

}  // namespace coloc::slurm
