#include "slurm/conf_files.hpp"

#include <glob.h>
#include <algorithm>
#include <cctype>
#include <fstream>
#include <functional>
#include <numeric>
#include <sstream>

#include "base/files.hpp"
#include "slurm/hostlist.hpp"

namespace coloc::slurm {

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

std::string text_of(const std::string& path) {
    std::ifstream in;
    if (auto why = base::open_for_reading(in, path); !why.empty()) throw ConfError(path + ": " + why);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// Splits on blanks outside double quotes.
std::vector<std::string> words(const std::string& s) {
    std::vector<std::string> out;
    std::string cur;
    bool quoted = false;
    for (char c : s) {
        if (c == '"') {
            quoted = !quoted;
            continue;
        }
        if (!quoted && std::isspace(static_cast<unsigned char>(c))) {
            if (!cur.empty()) out.push_back(std::move(cur));
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (!cur.empty()) out.push_back(cur);
    return out;
}

std::vector<std::string> nodes_of(const std::string& expr, const std::string& where) {
    auto names = expand_hostlist(expr);
    if (!names) throw ConfError(where + ": '" + expr + "' is not a Slurm hostlist");
    return *names;
}

int to_int(const std::string& s, const std::string& what) {
    std::size_t used = 0;
    int v = 0;
    try {
        v = std::stoi(s, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != s.size()) throw ConfError(what + ": '" + s + "' is not a number");
    return v;
}

// The files a File= value names: "/dev/nvidia[0-3,5]" is five.
int file_count(const std::string& files, const std::string& where) {
    const auto open = files.find('[');
    if (open == std::string::npos) return 1;
    const auto close = files.find(']', open);
    if (close == std::string::npos) throw ConfError(where + ": File='" + files + "' has no closing ']'");
    int n = 0;
    std::stringstream ranges(files.substr(open + 1, close - open - 1));
    for (std::string r; std::getline(ranges, r, ',');) {
        const auto dash = r.find('-');
        if (dash == std::string::npos) {
            to_int(r, where + ": File=");
            ++n;
        } else {
            n += to_int(r.substr(dash + 1), where + ": File=") - to_int(r.substr(0, dash), where + ": File=") + 1;
        }
    }
    return n;
}

}  // namespace

std::optional<std::string> ConfLine::get(const std::string& key) const {
    const std::string k = lower(key);
    for (const auto& [name, value] : values)
        if (lower(name) == k) return value;
    return std::nullopt;
}

std::vector<ConfLine> parse_conf(const std::string& text, const std::string& name) {
    std::vector<ConfLine> out;
    std::stringstream in(text);
    std::string joined;
    int number = 0, first = 0;
    for (std::string line; std::getline(in, line);) {
        ++number;
        if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
        if (joined.empty()) first = number;
        if (!line.empty() && line.back() == '\\') {
            joined += line.substr(0, line.size() - 1) + " ";
            continue;
        }
        joined += line;
        ConfLine cl{name, first, {}};
        for (const std::string& w : words(joined)) {
            const auto eq = w.find('=');
            if (eq == std::string::npos || eq == 0) continue;  // "Include x" and the like
            cl.values.emplace_back(w.substr(0, eq), w.substr(eq + 1));
        }
        joined.clear();
        if (!cl.values.empty()) out.push_back(std::move(cl));
    }
    return out;
}

std::vector<ConfLine> read_conf(const std::string& path) { return parse_conf(text_of(path), path); }

std::string beside(const std::string& slurm_conf, const std::string& name) {
    const auto slash = slurm_conf.rfind('/');
    return slash == std::string::npos ? name : slurm_conf.substr(0, slash + 1) + name;
}

SlurmConf parse_slurm_conf(const std::vector<ConfLine>& lines, const std::string& path) {
    SlurmConf conf;
    conf.path = path;
    conf.plugstack = beside(path, "plugstack.conf");
    std::string default_gres;
    std::vector<std::string> all;
    for (const ConfLine& l : lines) {
        if (auto v = l.get("ClusterName")) conf.cluster_name = *v, conf.cluster_where = l.where();
        if (auto v = l.get("PlugStackConfig")) conf.plugstack = *v;
        if (auto v = l.get("JobSubmitPlugins")) conf.job_submit_plugins = *v;
        if (auto v = l.get("NodeName")) {
            if (lower(*v) == "default") {
                if (auto g = l.get("Gres")) default_gres = *g;
                continue;
            }
            const std::string gres = l.get("Gres").value_or(default_gres);
            for (const std::string& n : nodes_of(*v, l.where())) {
                conf.nodes.push_back({n, gres, l.where()});
                all.push_back(n);
            }
        }
    }
    for (const ConfLine& l : lines) {
        auto v = l.get("PartitionName");
        if (!v || lower(*v) == "default") continue;
        ConfPartition p{*v, {}, lower(l.get("Default").value_or("no")) == "yes", l.where()};
        const std::string nodes = l.get("Nodes").value_or("");
        if (lower(nodes) == "all")
            p.nodes = all;
        else if (!nodes.empty())
            p.nodes = nodes_of(nodes, l.where());
        conf.partitions.push_back(std::move(p));
    }
    return conf;
}

int configured_gres_count(const std::string& gres, const std::string& name) {
    // Items are separated by commas outside parentheses: "gpu:a100:4(S:0-1),gpuslot:8".
    int total = 0;
    std::string item;
    int depth = 0;
    auto finish = [&] {
        std::string head = item.substr(0, item.find('('));
        item.clear();
        std::vector<std::string> parts;
        std::stringstream ss(head);
        for (std::string p; std::getline(ss, p, ':');) parts.push_back(p);
        if (parts.empty() || parts[0] != name) return;
        if (parts.size() == 1) {
            total += 1;
            return;
        }
        std::string count = parts.back();
        int scale = 1;
        if (!count.empty() && (count.back() == 'K' || count.back() == 'k')) scale = 1024, count.pop_back();
        total += to_int(count, "Gres=" + gres) * scale;
    };
    for (char c : gres) {
        if (c == '(') ++depth;
        if (c == ')') --depth;
        if (c == ',' && depth == 0) {
            finish();
            continue;
        }
        item += c;
    }
    if (!item.empty()) finish();
    return total;
}

std::map<std::string, GresNode> parse_gres_conf(const std::vector<ConfLine>& lines,
                                                const std::vector<std::string>& all_nodes) {
    std::map<std::string, GresNode> out;
    for (const ConfLine& l : lines) {
        const auto name = l.get("Name");
        if (!name || (*name != "gpu" && *name != "gpuslot")) continue;
        std::vector<std::string> nodes = all_nodes;
        if (auto expr = l.get("NodeName")) nodes = nodes_of(*expr, l.where());
        int count = 0;
        if (auto c = l.get("Count"))
            count = configured_gres_count(*name + ":" + *c, *name);
        else if (auto f = l.get("File"))
            count = file_count(*f, l.where());
        else
            count = 1;
        std::vector<int> row;
        if (auto links = l.get("Links")) {
            std::stringstream ss(*links);
            for (std::string v; std::getline(ss, v, ',');) row.push_back(to_int(v, l.where() + ": Links="));
        }
        for (const std::string& n : nodes) {
            GresNode& g = out[n];
            if (*name == "gpuslot") {
                g.slots += count;
                g.slots_where = l.where();
                continue;
            }
            g.gpus += count;
            g.gpus_where = l.where();
            if (!row.empty() && count == 1) {
                g.links.push_back(row);
                g.links_where = l.where();
            }
        }
    }
    // Links only count when every GPU of the node gives them.
    for (auto& [node, g] : out)
        if (static_cast<int>(g.links.size()) != g.gpus) g.links.clear();
    return out;
}

std::vector<int> islands_from_links(const std::vector<std::vector<int>>& links) {
    const int n = static_cast<int>(links.size());
    std::vector<int> parent(static_cast<std::size_t>(n));
    std::iota(parent.begin(), parent.end(), 0);
    std::function<int(int)> root = [&](int i) { return parent[i] == i ? i : parent[i] = root(parent[i]); };
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n && j < static_cast<int>(links[i].size()); ++j)
            if (i != j && links[i][j] > 0) parent[root(i)] = root(j);
    std::vector<int> island(static_cast<std::size_t>(n), -1);
    std::map<int, int> index;
    for (int i = 0; i < n; ++i) island[i] = index.try_emplace(root(i), static_cast<int>(index.size())).first->second;
    return island;
}

std::map<std::string, std::string> parse_topology_conf(const std::vector<ConfLine>& lines) {
    std::map<std::string, std::string> leaf;
    for (const ConfLine& l : lines) {
        auto sw = l.get("SwitchName");
        auto nodes = l.get("Nodes");
        if (!sw || !nodes) continue;
        for (const std::string& n : nodes_of(*nodes, l.where())) leaf[n] = *sw;
    }
    return leaf;
}

std::optional<PluginLine> parse_plugstack(const std::string& text, const std::string& name) {
    std::stringstream in(text);
    int number = 0;
    for (std::string line; std::getline(in, line);) {
        ++number;
        if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
        std::vector<std::string> w = words(line);
        if (w.empty()) continue;
        if (lower(w[0]) == "include" && w.size() > 1) {
            glob_t g{};
            if (glob(w[1].c_str(), 0, nullptr, &g) == 0)
                for (std::size_t i = 0; i < g.gl_pathc; ++i) {
                    const std::string path = g.gl_pathv[i];
                    if (auto found = parse_plugstack(text_of(path), path)) {
                        globfree(&g);
                        return found;
                    }
                }
            globfree(&g);
            continue;
        }
        if (w.size() < 2 || w[1].find("spank_coloc") == std::string::npos) continue;
        PluginLine p;
        p.where = name + ":" + std::to_string(number);
        for (std::size_t i = 2; i < w.size(); ++i)
            if (const auto eq = w[i].find('='); eq != std::string::npos)
                p.args[w[i].substr(0, eq)] = w[i].substr(eq + 1);
        return p;
    }
    return std::nullopt;
}

std::optional<PluginLine> find_coloc_plugin(const std::string& plugstack_path) {
    return parse_plugstack(text_of(plugstack_path), plugstack_path);
}

}  // namespace coloc::slurm
