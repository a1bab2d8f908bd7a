#include "config/site_check.hpp"

#include <yaml-cpp/yaml.h>
#include <algorithm>
#include <iostream>
#include <map>
#include <set>

#include "config/config.hpp"
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
        Config cfg;
        YamlLines y;
        slurm::SlurmConf conf;
        try {
            cfg = load_config(yaml_path);
            y = yaml_lines(yaml_path);
        } catch (const std::exception& e) {
            return differ(e.what());
        }
        try {
            conf = slurm::parse_slurm_conf(slurm::read_conf(slurm_conf_path), slurm_conf_path);
        } catch (const std::exception& e) {
            return differ(e.what());
        }
        std::vector<std::string> all;
        for (const auto& n : conf.nodes) all.push_back(n.name);
        std::map<std::string, slurm::GresNode> gres;
        const std::string gres_path = slurm::beside(slurm_conf_path, "gres.conf");
        bool gres_read = false;
        try {
            gres = slurm::parse_gres_conf(slurm::read_conf(gres_path), all);
            gres_read = true;
        } catch (const std::exception& e) {
            report.notes.push_back(std::string("no gres.conf compared: ") + e.what());
        }
        std::optional<slurm::PluginLine> plugin;
        try {
            plugin = slurm::find_coloc_plugin(conf.plugstack);
            if (!plugin) report.notes.push_back(conf.plugstack + ": no spank_coloc.so line");
        } catch (const std::exception& e) {
            report.notes.push_back(std::string("no plugstack.conf compared: ") + e.what());
        }

        if (!cfg.cluster.empty() && !conf.cluster_name.empty() && cfg.cluster != conf.cluster_name)
            differ(y.at(y.cluster) + ": cluster '" + cfg.cluster + "', but " + conf.cluster_where +
                   " says ClusterName=" + conf.cluster_name);
        if (plugin && plugin->args.count("cluster") && !conf.cluster_name.empty() &&
            plugin->args.at("cluster") != conf.cluster_name)
            differ(plugin->where + ": cluster=" + plugin->args.at("cluster") + ", but " + conf.cluster_where +
                   " says ClusterName=" + conf.cluster_name);
        std::set<std::string> slurm_nodes(all.begin(), all.end());
        for (const auto& [name, line] : y.node)
            if (!slurm_nodes.count(name)) differ(y.at(line) + ": node " + name + " is not in " + conf.path);

        std::map<std::string, std::vector<std::string>> plug_gpus, plug_slots;  // what differs -> nodes
        for (const slurm::ConfNode& n : conf.nodes) {
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
            if (auto g = gres.find(n.name); g != gres.end()) {
                if (g->second.gpus != gpus)
                    differ((g->second.gpus_where.empty() ? gres_path : g->second.gpus_where) + ": node " + n.name +
                           " has " + std::to_string(g->second.gpus) + " gpu, but " + said);
                if (g->second.slots != slots)
                    differ((g->second.slots_where.empty() ? gres_path : g->second.slots_where) + ": node " + n.name +
                           " has " + std::to_string(g->second.slots) + " gpuslot, but " + said);
            } else if (gres_read) {
                differ(gres_path + ": no Name=gpu or Name=gpuslot line for node " + n.name + ", but " + said);
            }
            if (const int idx = cfg.topology.node_index(n.name); idx >= 0) {
                const place::NodeType& t = cfg.topology.type_of(idx);
                const std::string at = y.at(y.type[t.name]);
                if (t.gpus != gpus)
                    differ(at + ": node type " + t.name + " (node " + n.name + ") has gpus: " + std::to_string(t.gpus) +
                           ", but " + said);
                if (slots > 0 && t.gpus * t.slots_per_gpu != slots)
                    differ(at + ": node type " + t.name + " (node " + n.name + ") has " + std::to_string(t.gpus) +
                           " x slots_per_gpu: " + std::to_string(t.slots_per_gpu) + ", but " + said);
                if (auto g = gres.find(n.name); g != gres.end() && !g->second.links.empty() &&
                                                std::count(t.island.begin(), t.island.end(), -1) < t.gpus) {
                    const std::vector<int> linked = slurm::islands_from_links(g->second.links);
                    if (!same_groups(linked, t.island))
                        differ(at + ": node type " + t.name + " (node " + n.name + ") has nvlink_islands " +
                               groups_text(t.island) + ", but " + g->second.links_where + " Links= give " +
                               groups_text(linked));
                }
            }
            if (plugin && slots > 0) {
                const auto pg = plugin->args.find("gpus");
                if (pg != plugin->args.end() && pg->second != std::to_string(gpus))
                    plug_gpus["gpus=" + pg->second + ", but " + n.where + " gives gpu:" + std::to_string(gpus)]
                        .push_back(n.name);
                const auto ps = plugin->args.find("slots_per_gpu");
                if (ps != plugin->args.end() && gpus > 0 && ps->second != std::to_string(slots / gpus))
                    plug_slots["slots_per_gpu=" + ps->second + ", but " + n.where +
                               " gives gpuslot:" + std::to_string(slots) + " over gpu:" + std::to_string(gpus)]
                        .push_back(n.name);
            }
        }
        for (const auto* m : {&plug_gpus, &plug_slots})
            for (const auto& [what, nodes] : *m) differ(plugin->where + ": " + what + " (nodes " + some(nodes) + ")");

        std::map<std::string, const slurm::ConfPartition*> parts;
        for (const auto& p : conf.partitions) parts[p.name] = &p;
        for (const auto& [name, mode] : cfg.partition_modes) {
            const std::string at = y.at(y.partition[name]);
            const auto p = parts.find(name);
            if (p == parts.end()) {
                differ(at + ": partition " + name + " is not in " + conf.path);
                continue;
            }
            if (mode != proto::GpuMode::Bind) continue;
            std::vector<std::string> slotless;
            for (const auto& node : p->second->nodes)
                for (const auto& n : conf.nodes)
                    if (n.name == node && slurm::configured_gres_count(n.gres, "gpuslot") == 0)
                        slotless.push_back(node);
            if (!slotless.empty())
                differ(at + ": partition " + name + " is in bind mode, but " + p->second->where + " gives it nodes " +
                       some(slotless) + " without gpuslot");
            if (conf.job_submit_plugins.find("lua") == std::string::npos)
                report.notes.push_back(at + ": partition " + name +
                                       " is in bind mode and slurm.conf has no JobSubmitPlugins=lua: users must ask "
                                       "for --gres=gpuslot:N (etc/job_submit.lua maps --gres=gpu:N)");
        }
        report.notes.push_back("compared " + conf.path + " (" + std::to_string(conf.nodes.size()) + " nodes, " +
                               std::to_string(conf.partitions.size()) + " partitions), " + gres_path + ", " +
                               conf.plugstack + " and " + yaml_path + (cfg.slurm_layout ? " (nodes from Slurm)" : ""));
    }

private:
    void differ(const std::string& what) { report.disagreements.push_back(what); }
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
