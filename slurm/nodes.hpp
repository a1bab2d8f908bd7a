// A node's weight and features as slurmctld holds them, read and written through libslurm
// (slurm_load_node_single, slurm_update_node), and its Gres for elastic slots. Node steering and
// elastic slots (daemon/steering/) decide what to set.
#pragma once

#include <cstdint>
#include <string>

namespace coloc::slurm {

// A node's settings as Slurm reports them.
struct SlurmNodeSettings {
    std::uint32_t weight = 1;
    std::string features;         // AvailableFeatures, comma-separated
    std::string active_features;  // ActiveFeatures, comma-separated
    std::string gres;             // Gres, "gpu:4,gpuslot:8"
};

// The count of GRES `name` in a node's Gres string ("gpu:a100:4(S:0-1),gpuslot:8"); -1 when absent.
int node_gres_count(const std::string& gres, const std::string& name);
// The whole Gres string with `name`'s count set to `count` (socket details dropped), for an
// update: Slurm drops every GRES an update leaves out.
std::string with_node_gres_count(const std::string& gres, const std::string& name, int count);

// One RPC each; false with `why` set when Slurm refuses or cannot be reached.
bool load_slurm_node(const std::string& node, SlurmNodeSettings& out, std::string& why);
bool update_slurm_node(const std::string& node, const SlurmNodeSettings& settings, std::string& why);
// Sets the node's whole Gres string (elastic slots) and nothing else.
bool update_slurm_node_gres(const std::string& node, const std::string& gres, std::string& why);

}  // namespace coloc::slurm
