#include "slurm/cluster_layout.hpp"

#include <stdexcept>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

#include "slurm/conf_files.hpp"
#include "slurm/hostlist.hpp"
#include "slurm/session.hpp"

namespace coloc::slurm {

namespace {

std::vector<LayoutNode> load_nodes() {
    node_info_msg_t* info = nullptr;
    if (slurm_load_node(0, &info, SHOW_ALL) != SLURM_SUCCESS || !info)
        throw std::runtime_error("cannot read the nodes from slurmctld: " + last_slurm_error());
    std::vector<LayoutNode> nodes;
    try {
        for (std::uint32_t i = 0; i < info->record_count; ++i) {
            const node_info_t& n = info->node_array[i];
            if (!n.name) continue;
            LayoutNode node{n.name, n.gres ? n.gres : "", 0, 0};
            node.gpus = configured_gres_count(node.gres, "gpu");
            node.slots = configured_gres_count(node.gres, "gpuslot");
            nodes.push_back(std::move(node));
        }
    } catch (const ConfError& e) {
        slurm_free_node_info_msg(info);
        throw std::runtime_error(std::string("slurmctld's node Gres: ") + e.what());
    }
    slurm_free_node_info_msg(info);
    return nodes;
}

std::vector<LayoutPartition> load_partitions() {
    partition_info_msg_t* info = nullptr;
    if (slurm_load_partitions(0, &info, SHOW_ALL) != SLURM_SUCCESS || !info)
        throw std::runtime_error("cannot read the partitions from slurmctld: " + last_slurm_error());
    std::vector<LayoutPartition> parts;
    for (std::uint32_t i = 0; i < info->record_count; ++i) {
        const partition_info_t& p = info->partition_array[i];
        if (!p.name) continue;
        LayoutPartition part{p.name, {}};
        if (p.nodes && *p.nodes)
            if (auto names = expand_hostlist(p.nodes)) part.nodes = std::move(*names);
        parts.push_back(std::move(part));
    }
    slurm_free_partition_info_msg(info);
    return parts;
}

std::string cluster_name() {
    slurm_conf_t* conf = nullptr;
    if (slurm_load_ctl_conf(0, &conf) != SLURM_SUCCESS || !conf) return "";
    std::string name = conf->cluster_name ? conf->cluster_name : "";
    slurm_free_ctl_conf(conf);
    return name;
}

}  // namespace

SlurmLayout load_slurm_layout() {
    init_libslurm();
    SlurmLayout layout;
    layout.nodes = load_nodes();
    layout.partitions = load_partitions();
    layout.cluster = cluster_name();
    return layout;
}

}  // namespace coloc::slurm
