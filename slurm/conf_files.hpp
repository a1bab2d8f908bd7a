// Slurm's own configuration files as text: slurm.conf, gres.conf, topology.conf and
// plugstack.conf. colocd reads what slurmctld cannot tell it (GPU links from gres.conf, leaf
// switches from topology.conf), and the check compares every copy of a setting line by line, so
// each value keeps the file and line it came from.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace coloc::slurm {

struct ConfError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// One line of Key=Value pairs ("NodeName=n[1-4] Gres=gpu:4"), continuation lines joined.
struct ConfLine {
    std::string file;
    int line = 0;
    std::vector<std::pair<std::string, std::string>> values;  // in order, keys as written
    // The value of `key` (case-insensitive, as Slurm reads keys); nullopt when absent.
    std::optional<std::string> get(const std::string& key) const;
    std::string where() const { return file + ":" + std::to_string(line); }
};

// Key=Value lines of a Slurm-style file; comments ('#') and blank lines are passed over.
std::vector<ConfLine> parse_conf(const std::string& text, const std::string& name);
// The same from a file; throws ConfError naming the file and the reason when it cannot be read.
std::vector<ConfLine> read_conf(const std::string& path);

// The file next to slurm.conf (gres.conf, topology.conf), as Slurm looks for it.
std::string beside(const std::string& slurm_conf, const std::string& name);

// A node as slurm.conf declares it (NodeName=DEFAULT values applied).
struct ConfNode {
    std::string name;
    std::string gres;  // Gres=, e.g. "gpu:4,gpuslot:8"
    std::string where;
};
struct ConfPartition {
    std::string name;
    std::vector<std::string> nodes;
    bool is_default = false;
    std::string where;
};
struct SlurmConf {
    std::string path;
    std::string cluster_name, cluster_where;
    std::string plugstack;  // PlugStackConfig=, else plugstack.conf beside slurm.conf
    std::string job_submit_plugins;
    std::vector<ConfNode> nodes;
    std::vector<ConfPartition> partitions;
};
SlurmConf parse_slurm_conf(const std::vector<ConfLine>& lines, const std::string& path);

// The units of GRES `name` in a node's configured Gres= ("gpu:a100:4(S:0-1),gpuslot:8");
// 0 when absent. Throws ConfError when an item of that name has no readable count.
int configured_gres_count(const std::string& gres, const std::string& name);

// gres.conf: per node, its GPUs (Name=gpu lines, File= or Count=), its slots (Name=gpuslot
// Count=) and, where every GPU line gives Links=, which GPUs are linked (NVLink) to which.
struct GresNode {
    int gpus = 0, slots = 0;
    std::string gpus_where, slots_where;
    std::vector<std::vector<int>> links;  // per GPU, its Links= row; empty when not given
    std::string links_where;
};
// Lines without NodeName= apply to every node in `all_nodes`.
std::map<std::string, GresNode> parse_gres_conf(const std::vector<ConfLine>& lines,
                                                const std::vector<std::string>& all_nodes);
// NVLink islands from Links= rows: GPUs joined by a link count above 0 share an island.
// Per GPU, its island's index.
std::vector<int> islands_from_links(const std::vector<std::vector<int>>& links);

// topology.conf: per node, the leaf switch (SwitchName= of the line whose Nodes= names it).
std::map<std::string, std::string> parse_topology_conf(const std::vector<ConfLine>& lines);

// plugstack.conf: the coloc plugin's line (spank_coloc.so), its arguments, file and line;
// includes are followed.
struct PluginLine {
    std::map<std::string, std::string> args;
    std::string where;
};
std::optional<PluginLine> find_coloc_plugin(const std::string& plugstack_path);
std::optional<PluginLine> parse_plugstack(const std::string& text, const std::string& name);

}  // namespace coloc::slurm
