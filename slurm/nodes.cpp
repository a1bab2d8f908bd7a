#include "slurm/nodes.hpp"

#include <stdexcept>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

#include "slurm/session.hpp"

namespace coloc::slurm {

bool load_slurm_node(const std::string& node, SlurmNodeSettings& out, std::string& why) {
    try {
        init_libslurm();
    } catch (const std::exception& e) {
        why = e.what();
        return false;
    }
    node_info_msg_t* info = nullptr;
    std::string name = node;
    if (slurm_load_node_single(&info, name.data(), SHOW_ALL) != SLURM_SUCCESS || !info) {
        why = "cannot read node " + node + " from slurmctld: " + last_slurm_error();
        return false;
    }
    bool found = false;
    for (std::uint32_t i = 0; i < info->record_count; ++i) {
        const node_info_t& n = info->node_array[i];
        if (!n.name || node != n.name) continue;
        out.weight = n.weight;
        out.features = n.features ? n.features : "";
        out.active_features = n.features_act ? n.features_act : out.features;
        found = true;
    }
    slurm_free_node_info_msg(info);
    if (!found) why = "slurmctld does not know node " + node;
    return found;
}

bool update_slurm_node(const std::string& node, const SlurmNodeSettings& s, std::string& why) {
    try {
        init_libslurm();
    } catch (const std::exception& e) {
        why = e.what();
        return false;
    }
    update_node_msg_t msg;
    slurm_init_update_node_msg(&msg);
    std::string name = node, features = s.features, active = s.active_features;
    msg.node_names = name.data();
    msg.weight = s.weight;
    msg.features = features.data();  // "" clears them
    msg.features_act = active.data();
    if (slurm_update_node(&msg) != SLURM_SUCCESS) {
        why = "cannot update node " + node + " (Weight=" + std::to_string(s.weight) + " Features=" + s.features +
              "): " + last_slurm_error();
        return false;
    }
    return true;
}

}  // namespace coloc::slurm
