#include "slurm/nodes.hpp"

#include <sstream>
#include <stdexcept>
#include <vector>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

#include "slurm/session.hpp"

namespace coloc::slurm {

namespace {

// "gpu:a100:4(S:0-1)" -> "gpu:a100:4"
std::string without_detail(const std::string& item) { return item.substr(0, item.find('(')); }

std::vector<std::string> gres_items(const std::string& gres) {
    std::vector<std::string> out;
    std::stringstream in(gres);
    std::string item;
    while (std::getline(in, item, ','))
        if (!item.empty()) out.push_back(without_detail(item));
    return out;
}

bool names(const std::string& item, const std::string& name) {
    return item.compare(0, name.size(), name) == 0 && (item.size() == name.size() || item[name.size()] == ':');
}

}  // namespace

int node_gres_count(const std::string& gres, const std::string& name) {
    for (const std::string& item : gres_items(gres)) {
        if (!names(item, name)) continue;
        const std::size_t colon = item.rfind(':');
        if (colon == std::string::npos || colon < name.size()) return 1;
        try {
            return std::stoi(item.substr(colon + 1));
        } catch (const std::exception&) {
            return -1;
        }
    }
    return -1;
}

std::string with_node_gres_count(const std::string& gres, const std::string& name, int count) {
    std::string out;
    for (std::string item : gres_items(gres)) {
        if (names(item, name)) {
            const std::size_t colon = item.rfind(':');
            const bool has_count = colon != std::string::npos && colon >= name.size() &&
                                   item.find_first_not_of("0123456789", colon + 1) == std::string::npos;
            item = (has_count ? item.substr(0, colon) : item) + ":" + std::to_string(count);
        }
        out += (out.empty() ? "" : ",") + item;
    }
    return out;
}

namespace {

// libslurm initialised for a call; false with the reason in `why` when it cannot be.
bool libslurm_ready(std::string& why) {
    try {
        init_libslurm();
        return true;
    } catch (const std::exception& e) {
        why = e.what();
        return false;
    }
}

}  // namespace

bool load_slurm_node(const std::string& node, SlurmNodeSettings& out, std::string& why) {
    if (!libslurm_ready(why)) return false;
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
        out.gres = n.gres ? n.gres : "";
        found = true;
    }
    slurm_free_node_info_msg(info);
    if (!found) why = "slurmctld does not know node " + node;
    return found;
}

bool update_slurm_node(const std::string& node, const SlurmNodeSettings& s, std::string& why) {
    if (!libslurm_ready(why)) return false;
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

bool update_slurm_node_gres(const std::string& node, const std::string& gres, std::string& why) {
    if (!libslurm_ready(why)) return false;
    update_node_msg_t msg;
    slurm_init_update_node_msg(&msg);
    std::string name = node, value = gres;
    msg.node_names = name.data();
    msg.gres = value.data();
    if (slurm_update_node(&msg) != SLURM_SUCCESS) {
        why = "cannot update node " + node + " (Gres=" + gres + "): " + last_slurm_error();
        return false;
    }
    return true;
}

}  // namespace coloc::slurm
