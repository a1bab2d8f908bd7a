// colocd's node list from what Slurm knows: slurmctld's nodes, GPU counts and GPU slots
// (slurm/cluster_layout.hpp), GPU links from gres.conf (Links=) and leaf switches from
// topology.conf where those files give them. colocd.yaml adds what Slurm does not know (a node
// type's topology when gres.conf gives no links, modes, profiles) and overrides Slurm for the
// nodes it names.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "slurm/cluster_layout.hpp"
#include "slurm/conf_files.hpp"

namespace coloc::daemon {

// What Slurm's files add to slurmctld's answer; each is empty when its file is absent.
struct LayoutFiles {
    std::map<std::string, slurm::GresNode> gres;  // gres.conf, per node
    std::map<std::string, std::string> leaf;      // topology.conf: node -> leaf switch
};
// Reads gres.conf and topology.conf beside `slurm_conf`; a file that is there but cannot be
// read throws slurm::ConfError.
LayoutFiles read_layout_files(const std::string& slurm_conf, const std::vector<std::string>& nodes);
// SLURM_CONF, else /etc/slurm/slurm.conf: where libslurm reads it.
std::string slurm_conf_path();

struct MergedLayout {
    place::Topology topology;
    std::vector<std::string> notes;  // nodes passed over and why, names that Slurm does not know
};
// The nodes colocd places on: those colocd.yaml names, as it describes them, then every other
// node of Slurm's with GPUs. Such a node takes the colocd.yaml node type of its GPU count and
// slots per GPU for what Slurm does not say, and gres.conf's links for its NVLink islands.
MergedLayout merge_layout(const Config& yaml, const slurm::SlurmLayout& slurm, const LayoutFiles& files);

}  // namespace coloc::daemon
