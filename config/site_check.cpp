#include "config/site_check.hpp"

#include <yaml-cpp/yaml.h>
#include <algorithm>
#include <iostream>
#include <map>
#include <set>

#include "config/config.hpp"
#include "config/job_submit_lua.hpp"
#include "slurm/conf_files.hpp"
#include "slurm/hostlist.hpp"

namespace coloc::daemon {

namespace {

// Where colocd.yaml says what: the line of a node type, of the node set naming a node, of a partition.
struct YamlLines {
    std::string file;
    std::map<std::string, int> type, node, partition;
    int cluster = 0;
    std::string at(int line) const { return file + ":" + std::to_string(line); }
};

YamlLines yaml_lines(const std::string& path) {
    YamlLines y{path, {}, {}, {}, 0};
    const YAML::Node root = YAML::LoadFile(path);
    if (root["cluster"]) y.cluster = root["cluster"].Mark().line + 1;
    if (root["node_types"] && root["node_types"].IsMap())
        for (const auto& kv : root["node_types"]) y.type[kv.first.as<std::string>()] = kv.first.Mark().line + 1;
    if (root["partitions"] && root["partitions"].IsMap())
        for (const auto& kv : root["partitions"]) y.partition[kv.first.as<std::string>()] = kv.first.Mark().line + 1;
    if (root["nodes"] && root["nodes"].IsSequence())
        for (const auto& set : root["nodes"])
            if (set["names"])
                if (auto names = slurm::expand_hostlist(set["names"].as<std::string>()))
                    for (const auto& n : *names) y.node[n] = set["names"].Mark().line + 1;
    return y;
}

std::string some(const std::vector<std::string>& names) {
    std::string s;
    for (std::size_t i = 0; i < names.size() && i < 4; ++i) s += (i ? "," : "") + names[i];
    if (names.size() > 4) s += " and " + std::to_string(names.size() - 4) + " more";
    return s;
}

std::string groups_text(const std::vector<int>& per_gpu) {
    std::map<int, std::vector<int>> g;
    for (std::size_t i = 0; i < per_gpu.size(); ++i)
        if (per_gpu[i] >= 0) g[per_gpu[i]].push_back(static_cast<int>(i));
    std::string s = "[";
    for (const auto& [k, gpus] : g) {
        s += (s.size() > 1 ? ", [" : "[");
        for (std::size_t i = 0; i < gpus.size(); ++i) s += (i ? ", " : "") + std::to_string(gpus[i]);
        s += "]";
    }
    return s + "]";
}

// Same groups, whatever their numbering.
bool same_groups(const std::vector<int>& a, const std::vector<int>& b) { return groups_text(a) == groups_text(b); }

class Checker {
public:
    CheckReport report;

    void run(const std::string& yaml_path, const std::string& slurm_conf_path) {
        if (!read_colocd_yaml(yaml_path) || !read_slurm_conf(slurm_conf_path)) return;
        read_gres_conf(slurm_conf_path);
        read_plugstack();
        check_cluster_names();
        check_yaml_nodes_in_slurm();
        check_nodes();
        check_partitions();
        check_job_submit_lua();
        report.notes.push_back("compared " + conf_.path + " (" + std::to_string(conf_.nodes.size()) + " nodes, " +
                               std::to_string(conf_.partitions.size()) + " partitions), " + gres_path_ + ", " +
                               conf_.plugstack + " and " + yaml_path +
                               (cfg_.slurm_layout ? " (nodes from Slurm)" : ""));
    }

private:
    // Every copy, as read: colocd.yaml, slurm.conf, gres.conf (when readable), the plugin's line.
    Config cfg_;
    YamlLines yaml_;
    slurm::SlurmConf conf_;
    std::vector<std::string> all_nodes_;  // slurm.conf's
    std::map<std::string, slurm::GresNode> gres_;
    std::string gres_path_;
    bool gres_read_ = false;
    std::optional<slurm::PluginLine> plugin_;
    // The plugin's gpus= and slots_per_gpu= where they disagree with slurm.conf: what differs -> nodes.
    std::map<std::string, std::vector<std::string>> plugin_gpus_, plugin_slots_;

    void differ(const std::string& what) { report.disagreements.push_back(what); }

    bool read_colocd_yaml(const std::string& path) {
        try {
            cfg_ = load_config(path);
            yaml_ = yaml_lines(path);
            return true;
        } catch (const std::exception& e) {
            differ(e.what());
            return false;
        }
    }

    bool read_slurm_conf(const std::string& path) {
        try {
            conf_ = slurm::parse_slurm_conf(slurm::read_conf(path), path);
        } catch (const std::exception& e) {
            differ(e.what());
            return false;
        }
        for (const auto& n : conf_.nodes) all_nodes_.push_back(n.name);
        return true;
    }

    // gres.conf and plugstack.conf may be missing: what is not there is a note, not a disagreement.
    void read_gres_conf(const std::string& slurm_conf_path) {
        gres_path_ = slurm::beside(slurm_conf_path, "gres.conf");
        try {
            gres_ = slurm::parse_gres_conf(slurm::read_conf(gres_path_), all_nodes_);
            gres_read_ = true;
        } catch (const std::exception& e) {
            report.notes.push_back(std::string("no gres.conf compared: ") + e.what());
        }
    }

    void read_plugstack() {
        try {
            plugin_ = slurm::find_coloc_plugin(conf_.plugstack);
            if (!plugin_) report.notes.push_back(conf_.plugstack + ": no spank_coloc.so line");
        } catch (const std::exception& e) {
            report.notes.push_back(std::string("no plugstack.conf compared: ") + e.what());
        }
    }

    void check_cluster_names() {
        if (!cfg_.cluster.empty() && !conf_.cluster_name.empty() && cfg_.cluster != conf_.cluster_name)
            differ(yaml_.at(yaml_.cluster) + ": cluster '" + cfg_.cluster + "', but " + conf_.cluster_where +
                   " says ClusterName=" + conf_.cluster_name);
        if (plugin_ && plugin_->args.count("cluster") && !conf_.cluster_name.empty() &&
            plugin_->args.at("cluster") != conf_.cluster_name)
            differ(plugin_->where + ": cluster=" + plugin_->args.at("cluster") + ", but " + conf_.cluster_where +
                   " says ClusterName=" + conf_.cluster_name);
    }

    void check_yaml_nodes_in_slurm() {
        const std::set<std::string> slurm_nodes(all_nodes_.begin(), all_nodes_.end());
        for (const auto& [name, line] : yaml_.node)
            if (!slurm_nodes.count(name)) differ(yaml_.at(line) + ": node " + name + " is not in " + conf_.path);
    }

    // Each slurm.conf node with GPUs or slots against gres.conf, its colocd.yaml node type and the
    // plugin's arguments.
    void check_nodes() {
        for (const slurm::ConfNode& n : conf_.nodes) {
            int gpus = 0, slots = 0;
            try {
                gpus = slurm::configured_gres_count(n.gres, "gpu");
                slots = slurm::configured_gres_count(n.gres, "gpuslot");
            } catch (const std::exception& e) {
                differ(n.where + ": node " + n.name + ": " + e.what());
                continue;
            }
            if (gpus == 0 && slots == 0) continue;
            const std::string said = n.where + " says Gres=" + n.gres;
            if (gpus > 0 && slots % gpus != 0)
                differ(n.where + ": node " + n.name + ": gpuslot:" + std::to_string(slots) +
                       " is not a whole number of slots per GPU of its gpu:" + std::to_string(gpus));
            check_gres_conf(n, gpus, slots, said);
            check_node_type(n, gpus, slots, said);
            collect_plugin_args(n, gpus, slots);
        }
        for (const auto* m : {&plugin_gpus_, &plugin_slots_})
            for (const auto& [what, nodes] : *m) differ(plugin_->where + ": " + what + " (nodes " + some(nodes) + ")");
    }

    void check_gres_conf(const slurm::ConfNode& n, int gpus, int slots, const std::string& said) {
        const auto g = gres_.find(n.name);
        if (g == gres_.end()) {
            if (gres_read_)
                differ(gres_path_ + ": no Name=gpu or Name=gpuslot line for node " + n.name + ", but " + said);
            return;
        }
        if (g->second.gpus != gpus)
            differ((g->second.gpus_where.empty() ? gres_path_ : g->second.gpus_where) + ": node " + n.name + " has " +
                   std::to_string(g->second.gpus) + " gpu, but " + said);
        if (g->second.slots != slots)
            differ((g->second.slots_where.empty() ? gres_path_ : g->second.slots_where) + ": node " + n.name + " has " +
                   std::to_string(g->second.slots) + " gpuslot, but " + said);
    }

    void check_node_type(const slurm::ConfNode& n, int gpus, int slots, const std::string& said) {
        const int idx = cfg_.topology.node_index(n.name);
        if (idx < 0) return;
        const place::NodeType& t = cfg_.topology.type_of(idx);
        const std::string at = yaml_.at(yaml_.type[t.name]);
        if (t.gpus != gpus)
            differ(at + ": node type " + t.name + " (node " + n.name + ") has gpus: " + std::to_string(t.gpus) +
                   ", but " + said);
        if (slots > 0 && t.gpus * t.slots_per_gpu != slots)
            differ(at + ": node type " + t.name + " (node " + n.name + ") has " + std::to_string(t.gpus) +
                   " x slots_per_gpu: " + std::to_string(t.slots_per_gpu) + ", but " + said);
        if (auto g = gres_.find(n.name);
            g != gres_.end() && !g->second.links.empty() && std::count(t.island.begin(), t.island.end(), -1) < t.gpus) {
            const std::vector<int> linked = slurm::islands_from_links(g->second.links);
            if (!same_groups(linked, t.island))
                differ(at + ": node type " + t.name + " (node " + n.name + ") has nvlink_islands " +
                       groups_text(t.island) + ", but " + g->second.links_where + " Links= give " +
                       groups_text(linked));
        }
    }

    void collect_plugin_args(const slurm::ConfNode& n, int gpus, int slots) {
        if (!plugin_ || slots <= 0) return;
        const auto pg = plugin_->args.find("gpus");
        if (pg != plugin_->args.end() && pg->second != std::to_string(gpus))
            plugin_gpus_["gpus=" + pg->second + ", but " + n.where + " gives gpu:" + std::to_string(gpus)].push_back(
                n.name);
        const auto ps = plugin_->args.find("slots_per_gpu");
        if (ps != plugin_->args.end() && gpus > 0 && ps->second != std::to_string(slots / gpus))
            plugin_slots_["slots_per_gpu=" + ps->second + ", but " + n.where +
                          " gives gpuslot:" + std::to_string(slots) + " over gpu:" + std::to_string(gpus)]
                .push_back(n.name);
    }

    // Each partition colocd.yaml gives a mode: in slurm.conf, and with slots on every node when it binds.
    void check_partitions() {
        std::map<std::string, const slurm::ConfPartition*> parts;
        for (const auto& p : conf_.partitions) parts[p.name] = &p;
        for (const auto& [name, mode] : cfg_.partition_modes) {
            const std::string at = yaml_.at(yaml_.partition[name]);
            const auto p = parts.find(name);
            if (p == parts.end()) {
                differ(at + ": partition " + name + " is not in " + conf_.path);
                continue;
            }
            if (mode == proto::GpuMode::Bind) check_bind_partition(*p->second, at);
        }
    }

    void check_bind_partition(const slurm::ConfPartition& p, const std::string& at) {
        std::vector<std::string> slotless;
        for (const auto& node : p.nodes)
            for (const auto& n : conf_.nodes)
                if (n.name == node && slurm::configured_gres_count(n.gres, "gpuslot") == 0) slotless.push_back(node);
        if (!slotless.empty())
            differ(at + ": partition " + p.name + " is in bind mode, but " + p.where + " gives it nodes " +
                   some(slotless) + " without gpuslot");
        if (conf_.job_submit_plugins.find("lua") == std::string::npos)
            report.notes.push_back(at + ": partition " + p.name +
                                   " is in bind mode and slurm.conf has no JobSubmitPlugins=lua: users must ask "
                                   "for --gres=gpuslot:N (etc/job_submit.lua maps --gres=gpu:N)");
    }

    // job_submit.lua beside slurm.conf (where slurmctld reads it): the bind partitions it maps
    // and gates, and where it reads the standing offers colocd writes.
    void check_job_submit_lua() {
        if (conf_.job_submit_plugins.find("lua") == std::string::npos) return;
        const std::string dir = conf_.path.substr(0, conf_.path.find_last_of('/') + 1);
        const std::optional<JobSubmitLua> lua = read_job_submit_lua(dir + "job_submit.lua");
        if (!lua) return;  // slurmctld names a missing script itself
        const auto at = [&](int line) { return lua->path + ":" + std::to_string(line); };
        for (const auto& [name, mode] : cfg_.partition_modes)
            if (mode == proto::GpuMode::Bind && lua->partitions_line &&
                std::find(lua->bind_partitions.begin(), lua->bind_partitions.end(), name) == lua->bind_partitions.end())
                differ(at(lua->partitions_line) + ": bind_partitions leaves out " + name + ", which " +
                       yaml_.at(yaml_.partition[name]) + " puts in bind mode: its jobs keep their GPU requests");
        if (!cfg_.admission.enabled || cfg_.admission.offers_file.empty()) return;
        if (!lua->offers_line)
            report.notes.push_back(lua->path +
                                   " has no OFFERS_FILE (a copy from before standing offers): every bind "
                                   "job waits for colocd's round; copy etc/job_submit.lua again");
        else if (lua->offers_file != cfg_.admission.offers_file)
            differ(at(lua->offers_line) + ": OFFERS_FILE \"" + lua->offers_file + "\", but " + yaml_.file +
                   " writes standing offers to " + cfg_.admission.offers_file + " (admission.offers_file)");
    }
};

}  // namespace

CheckReport check_site(const std::string& colocd_yaml, const std::string& slurm_conf) {
    Checker c;
    c.run(colocd_yaml, slurm_conf);
    return c.report;
}

int print_check_report(const CheckReport& report, const std::string& program) {
    for (const auto& n : report.notes) std::cout << program << ": " << n << "\n";
    for (const auto& d : report.disagreements) std::cerr << d << "\n";
    if (report.ok()) {
        std::cout << program << ": every copy agrees\n";
        return 0;
    }
    std::cerr << program << ": " << report.disagreements.size() << " disagreement"
              << (report.disagreements.size() == 1 ? "" : "s") << "\n";
    return 1;
}

}  // namespace coloc::daemon
