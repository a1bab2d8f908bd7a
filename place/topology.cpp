#include "place/topology.hpp"

#include <stdexcept>

namespace coloc::place {

namespace {
void fill(std::vector<int>& v, int n) { v.resize(static_cast<std::size_t>(n), -1); }

// Per GPU, the GPUs in the same group (none for a GPU in no group).
std::vector<std::uint64_t> peers(const std::vector<int>& group) {
    std::vector<std::uint64_t> out(group.size(), 0);
    for (std::size_t a = 0; a < group.size(); ++a)
        for (std::size_t b = 0; b < group.size(); ++b)
            if (group[a] >= 0 && group[a] == group[b]) out[a] |= std::uint64_t{1} << b;
    return out;
}
}  // namespace

int Topology::add_type(NodeType type) {
    if (type.gpus < 0 || type.slots_per_gpu < 1)
        throw std::invalid_argument("node type '" + type.name + "': gpus must be >= 0 and slots_per_gpu >= 1");
    fill(type.island, type.gpus);
    fill(type.pcie_switch, type.gpus);
    fill(type.nic, type.gpus);
    type.island_peers.clear();
    type.switch_peers.clear();
    if (type.gpus <= 64) {
        type.island_peers = peers(type.island);
        type.switch_peers = peers(type.pcie_switch);
    }
    types_.push_back(std::move(type));
    return static_cast<int>(types_.size()) - 1;
}

int Topology::add_node(const std::string& name, int type, const std::string& link) {
    if (type < 0 || type >= static_cast<int>(types_.size()))
        throw std::invalid_argument("node '" + name + "': unknown node type");
    if (node_by_name_.count(name)) throw std::invalid_argument("node '" + name + "' is declared twice");
    int link_id = -1;
    if (!link.empty()) {
        for (std::size_t i = 0; i < link_names_.size(); ++i)
            if (link_names_[i] == link) link_id = static_cast<int>(i);
        if (link_id < 0) {
            link_names_.push_back(link);
            link_nodes_.emplace_back();
            link_id = static_cast<int>(link_names_.size()) - 1;
        }
    }
    int index = static_cast<int>(nodes_.size());
    nodes_.push_back({name, type, link_id});
    node_by_name_.emplace(name, index);
    if (link_id >= 0) link_nodes_[link_id].push_back(index);
    total_gpus_ += types_[type].gpus;
    return index;
}

int Topology::node_index(const std::string& name) const {
    auto it = node_by_name_.find(name);
    return it == node_by_name_.end() ? -1 : it->second;
}

int Topology::type_index(const std::string& name) const {
    for (std::size_t i = 0; i < types_.size(); ++i)
        if (types_[i].name == name) return static_cast<int>(i);
    return -1;
}

Topology uniform_topology(int nodes, int gpus, int slots_per_gpu, int island_size, int nodes_per_link,
                          const std::string& prefix) {
    Topology topo;
    NodeType t;
    t.name = "uniform";
    t.gpus = gpus;
    t.slots_per_gpu = slots_per_gpu;
    for (int g = 0; g < gpus; ++g) {
        int island = island_size > 0 ? g / island_size : -1;
        t.island.push_back(island);
        t.pcie_switch.push_back(island);
        t.nic.push_back(0);
    }
    int type = topo.add_type(t);
    for (int n = 0; n < nodes; ++n) {
        std::string link = nodes_per_link > 0 ? "leaf" + std::to_string(n / nodes_per_link + 1) : "";
        topo.add_node(prefix + std::to_string(n + 1), type, link);
    }
    return topo;
}

std::vector<model::GpuHardware> gpu_hardware(const Topology& topo) {
    std::vector<model::GpuHardware> out;
    for (const NodeType& t : topo.types()) out.push_back(t.gpu);
    return out;
}

}  // namespace coloc::place
