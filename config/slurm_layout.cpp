#include "config/slurm_layout.hpp"

#include <sys/stat.h>
#include <cstdlib>
#include <set>

namespace coloc::daemon {

namespace {

bool exists(const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0;
}

std::string islands_text(const std::vector<int>& island) {
    std::string s;
    for (int i : island) s += std::to_string(i);
    return s;
}

// The colocd.yaml type that describes nodes of `gpus` GPUs and `slots_per_gpu` slots, -1 when none.
int matching_type(const place::Topology& yaml, int gpus, int slots_per_gpu) {
    for (std::size_t t = 0; t < yaml.types().size(); ++t)
        if (yaml.types()[t].gpus == gpus && yaml.types()[t].slots_per_gpu == slots_per_gpu) return static_cast<int>(t);
    return -1;
}

}  // namespace

std::string slurm_conf_path() {
    const char* env = std::getenv("SLURM_CONF");
    return env && *env ? env : "/etc/slurm/slurm.conf";
}

LayoutFiles read_layout_files(const std::string& slurm_conf, const std::vector<std::string>& nodes) {
    LayoutFiles files;
    if (const std::string gres = slurm::beside(slurm_conf, "gres.conf"); exists(gres))
        files.gres = slurm::parse_gres_conf(slurm::read_conf(gres), nodes);
    if (const std::string topo = slurm::beside(slurm_conf, "topology.conf"); exists(topo))
        files.leaf = slurm::parse_topology_conf(slurm::read_conf(topo));
    return files;
}

MergedLayout merge_layout(const Config& yaml, const slurm::SlurmLayout& slurm, const LayoutFiles& files) {
    MergedLayout out;
    place::Topology& topo = out.topology;
    const place::Topology& mine = yaml.topology;
    for (const place::NodeType& t : mine.types()) topo.add_type(t);
    std::set<std::string> in_slurm;
    for (const slurm::LayoutNode& n : slurm.nodes) in_slurm.insert(n.name);
    // The nodes colocd.yaml names, as it describes them; a leaf switch where it names no link.
    for (const place::NodeInfo& n : mine.nodes()) {
        std::string link = n.link >= 0 ? mine.link_names()[static_cast<std::size_t>(n.link)] : "";
        if (link.empty())
            if (auto leaf = files.leaf.find(n.name); leaf != files.leaf.end()) link = leaf->second;
        topo.add_node(n.name, n.type, link);
        if (!in_slurm.count(n.name))
            out.notes.push_back("colocd.yaml names node " + n.name + ", which Slurm does not know");
    }
    std::map<std::string, int> made;  // types built from Slurm, by their description
    for (const slurm::LayoutNode& n : slurm.nodes) {
        if (topo.node_index(n.name) >= 0) continue;
        if (n.gpus <= 0) {
            if (n.slots > 0)
                out.notes.push_back("node " + n.name + " has gpuslot:" + std::to_string(n.slots) +
                                    " but no gres/gpu: name it in colocd.yaml");
            continue;
        }
        const int slots_per_gpu = n.slots > 0 ? n.slots / n.gpus : 1;
        if (n.slots > 0 && n.slots % n.gpus != 0) {
            out.notes.push_back("node " + n.name + ": gpuslot:" + std::to_string(n.slots) +
                                " is not a multiple of gpu:" + std::to_string(n.gpus) + "; passed over");
            continue;
        }
        const int yaml_type = matching_type(mine, n.gpus, slots_per_gpu);
        const auto gres = files.gres.find(n.name);
        const bool has_links = gres != files.gres.end() && !gres->second.links.empty() &&
                               static_cast<int>(gres->second.links.size()) == n.gpus;
        int type = yaml_type;
        if (has_links || yaml_type < 0) {
            place::NodeType t;
            if (yaml_type >= 0) t = mine.types()[static_cast<std::size_t>(yaml_type)];
            t.gpus = n.gpus;
            t.slots_per_gpu = slots_per_gpu;
            if (has_links) t.island = slurm::islands_from_links(gres->second.links);
            t.name = (yaml_type >= 0 ? t.name : "slurm-" + std::to_string(n.gpus) + "gpu") + "-" +
                     std::to_string(slots_per_gpu) + "slot" + (has_links ? "-links" + islands_text(t.island) : "");
            auto [it, fresh] = made.try_emplace(t.name, -1);
            if (fresh) it->second = topo.add_type(std::move(t));
            type = it->second;
        }
        const auto leaf = files.leaf.find(n.name);
        topo.add_node(n.name, type, leaf != files.leaf.end() ? leaf->second : "");
    }
    std::set<std::string> parts;
    for (const slurm::LayoutPartition& p : slurm.partitions) parts.insert(p.name);
    for (const auto& [name, mode] : yaml.partition_modes)
        if (!parts.count(name))
            out.notes.push_back("colocd.yaml sets a mode for partition " + name + ", which Slurm does not know");
    return out;
}

}  // namespace coloc::daemon
