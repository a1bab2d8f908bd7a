// What the cluster is made of: node types (GPUs, slots per GPU, which GPUs share an NVLink
// island, a PCIe switch, a NIC), the nodes, and which nodes share a network link.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/hardware.hpp"

namespace coloc::place {

struct NodeType {
    std::string name;
    int gpus = 0;
    int slots_per_gpu = 1;
    model::GpuHardware gpu;  // the type and memory of its GPUs
    // Per GPU: the index of its NVLink island, PCIe switch and NIC within the node, -1 = none.
    std::vector<int> island;
    std::vector<int> pcie_switch;
    std::vector<int> nic;
    // Filled by Topology::add_type on types of at most 64 GPUs: per GPU, the GPUs (as bits)
    // that share its NVLink island, and those that share its PCIe switch.
    std::vector<std::uint64_t> island_peers, switch_peers;
};

struct NodeInfo {
    std::string name;
    int type = 0;   // index into Topology::types
    int link = -1;  // the network link (leaf switch) the node hangs off, -1 = none known
};

class Topology {
public:
    int add_type(NodeType type);  // fills missing per-GPU vectors with -1
    int add_node(const std::string& name, int type, const std::string& link);

    const std::vector<NodeType>& types() const { return types_; }
    const std::vector<NodeInfo>& nodes() const { return nodes_; }
    const NodeType& type_of(int node) const { return types_[nodes_[node].type]; }
    int node_index(const std::string& name) const;  // -1 when unknown
    // The index of the node's GPUs in gpu_hardware(): its node type's.
    std::uint16_t hardware_of(int node) const { return static_cast<std::uint16_t>(nodes_[node].type); }
    int type_index(const std::string& name) const;  // -1 when unknown
    const std::vector<std::string>& link_names() const { return link_names_; }
    const std::vector<int>& nodes_on_link(int link) const { return link_nodes_[link]; }
    int total_gpus() const { return total_gpus_; }

private:
    std::vector<NodeType> types_;
    std::vector<NodeInfo> nodes_;
    std::unordered_map<std::string, int> node_by_name_;
    std::vector<std::string> link_names_;
    std::vector<std::vector<int>> link_nodes_;
    int total_gpus_ = 0;
};

// The GPUs of each node type, in type order: the list model::Neighbour::hardware indexes.
std::vector<model::GpuHardware> gpu_hardware(const Topology& topo);

// A uniform cluster: `nodes` nodes named prefix1..prefixN, each with `gpus` GPUs in islands of
// `island_size`, one switch per island, one NIC, and `nodes_per_link` nodes per leaf link.
Topology uniform_topology(int nodes, int gpus, int slots_per_gpu, int island_size = 2, int nodes_per_link = 16,
                          const std::string& prefix = "n");

}  // namespace coloc::place
