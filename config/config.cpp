#include "config/config.hpp"

#include <yaml-cpp/yaml.h>
#include <fstream>
#include <set>
#include <sstream>

#include "base/files.hpp"
#include "config/hardware.hpp"
#include "config/reader.hpp"
#include "slurm/hostlist.hpp"

namespace coloc::daemon {

namespace {

void read_node_types(const Reader& r, const YAML::Node& types, Config& cfg) {
    if (!types.IsMap()) r.fail(types, "node_types", "expected a mapping of type name to description");
    for (const auto& kv : types) {
        std::string name = kv.first.as<std::string>();
        std::string key = "node_types." + name;
        const YAML::Node& t = kv.second;
        r.only_keys(t, key,
                    {"gpus", "slots_per_gpu", "nvlink_islands", "pcie_switches", "nics", "gpu_type", "gpu_memory_gb"});
        if (!t["gpus"]) r.fail(t, key + ".gpus", "missing");
        place::NodeType nt;
        nt.name = name;
        nt.gpus = r.integer(t["gpus"], key + ".gpus", 0, 64);
        nt.slots_per_gpu = t["slots_per_gpu"] ? r.integer(t["slots_per_gpu"], key + ".slots_per_gpu", 1, 64) : 1;
        if (t["nvlink_islands"]) nt.island = r.groups(t["nvlink_islands"], key + ".nvlink_islands", nt.gpus);
        if (t["pcie_switches"]) nt.pcie_switch = r.groups(t["pcie_switches"], key + ".pcie_switches", nt.gpus);
        if (t["nics"]) nt.nic = r.groups(t["nics"], key + ".nics", nt.gpus);
        read_node_type_gpus(r, t, key, nt, cfg.notes);
        cfg.topology.add_type(std::move(nt));
    }
}

void read_nodes(const Reader& r, const YAML::Node& nodes, Config& cfg) {
    if (!nodes.IsSequence()) r.fail(nodes, "nodes", "expected a list of node sets");
    int i = 0;
    for (const auto& set : nodes) {
        std::string key = "nodes[" + std::to_string(i++) + "]";
        r.only_keys(set, key, {"names", "type", "link", "mode"});
        if (!set["names"]) r.fail(set, key + ".names", "missing");
        if (!set["type"]) r.fail(set, key + ".type", "missing");
        std::string expr = r.str(set["names"], key + ".names");
        auto names = slurm::expand_hostlist(expr);
        if (!names || names->empty()) r.fail(set["names"], key + ".names", "'" + expr + "' is not a Slurm hostlist");
        std::string type = r.str(set["type"], key + ".type");
        int type_index = cfg.topology.type_index(type);
        if (type_index < 0) r.fail(set["type"], key + ".type", "unknown node type '" + type + "'");
        std::string link = set["link"] ? r.str(set["link"], key + ".link") : "";
        for (const auto& n : *names) {
            if (cfg.topology.node_index(n) >= 0)
                r.fail(set["names"], key + ".names", "node '" + n + "' is declared twice");
            cfg.topology.add_node(n, type_index, link);
            if (set["mode"]) cfg.node_modes[n] = r.mode(set["mode"], key + ".mode");
        }
    }
}

// `elastic_slots: on|off`, or a mapping with enabled, interval_s, max_updates_per_round,
// max_pending_jobs.
void read_elastic(const Reader& r, const YAML::Node& n, ElasticConfig& e) {
    if (n.IsScalar()) {
        const std::string v = r.str(n, "elastic_slots");
        if (v != "on" && v != "off" && v != "true" && v != "false")
            r.fail(n, "elastic_slots", "'" + v + "' is not one of on, off (or a mapping)");
        e.enabled = v == "on" || v == "true";
        return;
    }
    if (!n.IsMap()) r.fail(n, "elastic_slots", "expected on, off or a mapping");
    r.only_keys(n, "elastic_slots", {"enabled", "interval_s", "max_updates_per_round", "max_pending_jobs"});
    if (n["enabled"]) e.enabled = r.boolean(n["enabled"], "elastic_slots.enabled");
    if (n["interval_s"]) e.interval_s = r.integer(n["interval_s"], "elastic_slots.interval_s", 1, 86400);
    if (n["max_updates_per_round"])
        e.max_updates_per_round =
            r.integer(n["max_updates_per_round"], "elastic_slots.max_updates_per_round", 1, 100000);
    if (n["max_pending_jobs"])
        e.max_pending_jobs = r.integer(n["max_pending_jobs"], "elastic_slots.max_pending_jobs", 1, 1000000);
}

// `admission: on|off`, or a mapping with enabled, interval_s, watch_ms, lease_s,
// max_updates_per_round, max_pending_jobs, arrival_window_s, explore_share, offers_file.
void read_admission(const Reader& r, const YAML::Node& n, AdmissionConfig& a) {
    if (n.IsScalar()) {
        const std::string v = r.str(n, "admission");
        if (v != "on" && v != "off" && v != "true" && v != "false")
            r.fail(n, "admission", "'" + v + "' is not one of on, off (or a mapping)");
        a.enabled = v == "on" || v == "true";
        return;
    }
    if (!n.IsMap()) r.fail(n, "admission", "expected on, off or a mapping");
    r.only_keys(n, "admission",
                {"enabled", "interval_s", "watch_ms", "lease_s", "max_updates_per_round", "max_pending_jobs",
                 "arrival_window_s", "explore_share", "offers_file"});
    if (n["enabled"]) a.enabled = r.boolean(n["enabled"], "admission.enabled");
    if (n["interval_s"]) a.interval_s = r.integer(n["interval_s"], "admission.interval_s", 1, 3600);
    if (n["watch_ms"]) a.watch_ms = r.integer(n["watch_ms"], "admission.watch_ms", 0, 60000);
    if (n["lease_s"]) a.lease_s = r.integer(n["lease_s"], "admission.lease_s", 10, 86400);
    if (a.lease_s < 2 * a.interval_s)
        r.fail(n, "admission.lease_s",
               std::to_string(a.lease_s) + " is less than two intervals (" + std::to_string(2 * a.interval_s) +
                   "): a held job would start before colocd renews it");
    if (n["max_updates_per_round"])
        a.max_updates_per_round = r.integer(n["max_updates_per_round"], "admission.max_updates_per_round", 1, 100000);
    if (n["max_pending_jobs"])
        a.max_pending_jobs = r.integer(n["max_pending_jobs"], "admission.max_pending_jobs", 1, 1000000);
    if (n["arrival_window_s"])
        a.arrival_window_s = r.integer(n["arrival_window_s"], "admission.arrival_window_s", 0, 365 * 86400);
    if (n["explore_share"]) a.explore_share = r.number(n["explore_share"], "admission.explore_share", 0, 1);
    if (n["offers_file"]) {
        a.offers_file = r.str(n["offers_file"], "admission.offers_file");
        if (!a.offers_file.empty() && a.offers_file.front() != '/')
            r.fail(n["offers_file"], "admission.offers_file", "'" + a.offers_file + "' is not an absolute path");
    }
}

void read_steering(const Reader& r, const YAML::Node& n, SteeringConfig& s) {
    r.only_keys(n, "steering",
                {"enabled", "interval_s", "max_updates_per_round", "max_extra_weight", "full_weight_loss",
                 "weight_hysteresis", "quiet_loss", "quiet_hysteresis", "weight_profile", "classes"});
    auto number = [&](const char* key, double min, double max) {
        const std::string k = std::string("steering.") + key;
        if (!n[key].IsScalar()) r.fail(n[key], k, "expected a number");
        double v = 0;
        try {
            v = n[key].as<double>();
        } catch (const YAML::Exception&) {
            r.fail(n[key], k, "'" + n[key].as<std::string>() + "' is not a number");
        }
        if (!(v >= min && v <= max))
            r.fail(n[key], k,
                   n[key].as<std::string>() + " is outside " + std::to_string(min) + ".." + std::to_string(max));
        return v;
    };
    if (n["enabled"]) {
        s.enabled = r.boolean(n["enabled"], "steering.enabled");
    }
    if (n["interval_s"]) s.interval_s = r.integer(n["interval_s"], "steering.interval_s", 1, 86400);
    if (n["max_updates_per_round"])
        s.max_updates_per_round = r.integer(n["max_updates_per_round"], "steering.max_updates_per_round", 1, 100000);
    if (n["max_extra_weight"])
        s.max_extra_weight = r.integer(n["max_extra_weight"], "steering.max_extra_weight", 1, 1000000);
    if (n["full_weight_loss"]) s.full_weight_loss = number("full_weight_loss", 1e-6, 1000);
    if (n["weight_hysteresis"])
        s.weight_hysteresis = r.integer(n["weight_hysteresis"], "steering.weight_hysteresis", 0, 1000000);
    if (n["quiet_loss"]) s.quiet_loss = number("quiet_loss", 0, 1000);
    if (n["quiet_hysteresis"]) s.quiet_hysteresis = number("quiet_hysteresis", 0, 1000);
    if (n["weight_profile"]) s.weight_profile = r.str(n["weight_profile"], "steering.weight_profile");
    if (n["classes"]) {
        const YAML::Node& c = n["classes"];
        if (!c.IsMap()) r.fail(c, "steering.classes", "expected a mapping of feature name to profile name");
        s.classes.clear();
        for (const auto& kv : c) {
            const std::string feature = kv.first.as<std::string>();
            const std::string key = "steering.classes." + feature;
            if (feature.rfind(kSteeringFeaturePrefix, 0) != 0 || feature.size() == 6 ||
                feature.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
                r.fail(kv.first, key, "a class feature is coloc_ followed by lower-case letters, digits or '_'");
            s.classes.push_back({feature, kv.second.IsNull() ? "" : r.str(kv.second, key)});
        }
    }
}

// Each read_* below sets the fields of one part of colocd.yaml's top level, in the order errors
// are reported; a key the file leaves out keeps its default.
void set_str(const Reader& r, const YAML::Node& root, const char* key, std::string& out) {
    if (root[key]) out = r.str(root[key], key);
}

void set_int(const Reader& r, const YAML::Node& root, const char* key, int min, int max, int& out) {
    if (root[key]) out = r.integer(root[key], key, min, max);
}

// Where colocd serves and keeps its files.
void read_endpoints(const Reader& r, const YAML::Node& root, Config& cfg) {
    set_str(r, root, "cluster", cfg.cluster);
    if (root["listen"]) cfg.listen = r.str_list(root["listen"], "listen");
    if (cfg.listen.empty()) r.fail(root["listen"], "listen", "needs at least one endpoint");
    for (const auto& e : cfg.listen)
        if (e.rfind("ipc://", 0) != 0 && e.rfind("tcp://", 0) != 0)
            r.fail(root["listen"], "listen", "'" + e + "' is not an ipc:// or tcp:// endpoint");
    if (root["listen_plain"]) cfg.listen_plain = r.str_list(root["listen_plain"], "listen_plain");
    for (const auto& e : cfg.listen_plain)
        if (e.rfind("ipc://", 0) != 0 && e.rfind("tcp://", 0) != 0)
            r.fail(root["listen_plain"], "listen_plain", "'" + e + "' is not an ipc:// or tcp:// endpoint");
    set_str(r, root, "database", cfg.database);
    set_str(r, root, "pidfile", cfg.pidfile);
    set_str(r, root, "munge_socket", cfg.munge_socket);
    set_str(r, root, "server_key_file", cfg.server_key_file);
}

// Who may ask what.
void read_access(const Reader& r, const YAML::Node& root, Config& cfg) {
    set_int(r, root, "credential_max_age_s", 0, 86400, cfg.credential_max_age_s);
    if (root["admins"]) cfg.admins = r.str_list(root["admins"], "admins");
    set_str(r, root, "slurm_user", cfg.slurm_user);
}

// The model colocd places by, its catalogue, and what a decision keeps.
void read_model_choice(const Reader& r, const YAML::Node& root, Config& cfg) {
    if (root["model"]) {
        cfg.model = r.str(root["model"], "model");
        if (cfg.model != "baseline" && cfg.model != "coloc")
            r.fail(root["model"], "model", "'" + cfg.model + "' is not one of baseline, coloc");
    }
    set_str(r, root, "profiles", cfg.profiles);
    set_int(r, root, "explain_candidates", 1, 100, cfg.explain_candidates);
}

// Metrics, and what colocd learns from Slurm and from ended jobs.
void read_metrics_and_learning(const Reader& r, const YAML::Node& root, Config& cfg) {
    set_int(r, root, "metrics_port", 0, 65535, cfg.metrics_port);
    set_str(r, root, "metrics_address", cfg.metrics_address);
    set_int(r, root, "reconcile_interval_s", 0, 86400, cfg.reconcile_interval_s);
    set_int(r, root, "elapsed_min_s", 0, 86400, cfg.elapsed_min_s);
    set_int(r, root, "elapsed_refit_every", 1, 100000, cfg.elapsed_refit_every);
    set_int(r, root, "elapsed_window", 1, 100000, cfg.elapsed_window);
}

// What colocd does while the database cannot be written.
void read_database_trouble(const Reader& r, const YAML::Node& root, Config& cfg) {
    if (root["database_backlog_max"])
        cfg.database_backlog_max =
            static_cast<std::size_t>(r.integer(root["database_backlog_max"], "database_backlog_max", 1, 10000000));
    set_int(r, root, "database_retry_s", 1, 3600, cfg.database_retry_s);
    set_int(r, root, "database_retry_max_s", 1, 86400, cfg.database_retry_max_s);
    if (root["database_sync"]) {
        const std::string sync = r.str(root["database_sync"], "database_sync");
        if (sync != "full" && sync != "normal")
            r.fail(root["database_sync"], "database_sync", "'" + sync + "' is not one of full, normal");
        cfg.database_sync_full = sync == "full";
    }
    set_str(r, root, "database_journal", cfg.database_journal);
    set_int(r, root, "database_journal_reserve_mb", 1, 65536, cfg.database_journal_reserve_mb);
    if (cfg.database_retry_max_s < cfg.database_retry_s)
        r.fail(root["database_retry_max_s"] ? root["database_retry_max_s"] : root["database_retry_s"],
               "database_retry_max_s",
               std::to_string(cfg.database_retry_max_s) + " is less than database_retry_s (" +
                   std::to_string(cfg.database_retry_s) + ")");
}

// How colocd treats a step's GPUs: by default, and per partition.
void read_modes(const Reader& r, const YAML::Node& root, Config& cfg) {
    if (root["default_mode"]) cfg.default_mode = r.mode(root["default_mode"], "default_mode");
    if (root["narrow_may_drop_gpus"])
        cfg.narrow_may_drop_gpus = r.boolean(root["narrow_may_drop_gpus"], "narrow_may_drop_gpus");
    if (!root["partitions"]) return;
    const YAML::Node& parts = root["partitions"];
    if (!parts.IsMap()) r.fail(parts, "partitions", "expected a mapping of partition name to settings");
    for (const auto& kv : parts) {
        std::string key = "partitions." + kv.first.as<std::string>();
        r.only_keys(kv.second, key, {"mode"});
        if (!kv.second["mode"]) r.fail(kv.second, key + ".mode", "missing");
        cfg.partition_modes[kv.first.as<std::string>()] = r.mode(kv.second["mode"], key + ".mode");
    }
}

// What the cluster is made of. Without `nodes:` colocd reads them from Slurm; node types then
// describe what Slurm does not.
void read_cluster(const Reader& r, const YAML::Node& root, Config& cfg) {
    if (root["node_types"]) read_node_types(r, root["node_types"], cfg);
    if (root["nodes"]) read_nodes(r, root["nodes"], cfg);
    cfg.slurm_layout = root["slurm_layout"] ? r.boolean(root["slurm_layout"], "slurm_layout") : !root["nodes"];
    if (!cfg.slurm_layout && !root["nodes"])
        r.fail(root, "nodes", "missing: list the nodes colocd places on, or let it read them from Slurm");
    set_int(r, root, "slurm_layout_interval_s", 0, 86400, cfg.slurm_layout_interval_s);
    if (root["model_params"]) read_model_params(r, root["model_params"], cfg);
}

Config parse_root(const YAML::Node& root, const std::string& name) {
    if (!root.IsDefined() || root.IsNull()) throw ConfigError(name + ": the file is empty");
    Reader r(name);
    r.only_keys(root, "",
                {"cluster",
                 "listen",
                 "listen_plain",
                 "database",
                 "pidfile",
                 "munge_socket",
                 "server_key_file",
                 "credential_max_age_s",
                 "admins",
                 "slurm_user",
                 "model",
                 "profiles",
                 "explain_candidates",
                 "metrics_port",
                 "metrics_address",
                 "reconcile_interval_s",
                 "elapsed_min_s",
                 "elapsed_refit_every",
                 "elapsed_window",
                 "database_backlog_max",
                 "database_retry_s",
                 "database_retry_max_s",
                 "database_sync",
                 "database_journal",
                 "database_journal_reserve_mb",
                 "partitions",
                 "default_mode",
                 "narrow_may_drop_gpus",
                 "node_types",
                 "nodes",
                 "slurm_layout",
                 "slurm_layout_interval_s",
                 "model_params",
                 "steering",
                 "elastic_slots",
                 "admission"});
    Config cfg;
    cfg.path = name;
    read_endpoints(r, root, cfg);
    read_access(r, root, cfg);
    read_model_choice(r, root, cfg);
    read_metrics_and_learning(r, root, cfg);
    read_database_trouble(r, root, cfg);
    read_modes(r, root, cfg);
    if (root["steering"]) read_steering(r, root["steering"], cfg.steering);
    if (root["elastic_slots"]) read_elastic(r, root["elastic_slots"], cfg.elastic);
    if (root["admission"]) read_admission(r, root["admission"], cfg.admission);
    read_cluster(r, root, cfg);
    return cfg;
}

}  // namespace

std::string database_journal_path(const Config& cfg) {
    return cfg.database_journal.empty() ? cfg.database + ".backlog" : cfg.database_journal;
}

Config parse_config(const std::string& text, const std::string& name) {
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::ParserException& e) {
        throw ConfigError(name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
    try {
        return parse_root(root, name);
    } catch (const YAML::Exception& e) {
        throw ConfigError(name + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
    } catch (const std::invalid_argument& e) {
        throw ConfigError(name + ": " + e.what());
    }
}

int narrow_gpu_count(const Config& cfg, const model::JobProfile& profile, int held) {
    if (cfg.narrow_may_drop_gpus && profile.known.count("gpus") && profile.gpus > 0 && profile.gpus < held)
        return profile.gpus;
    return held;
}

Config load_config(const std::string& path) {
    std::ifstream in;
    if (auto why = base::open_for_reading(in, path); !why.empty()) throw ConfigError(path + ": " + why);
    std::stringstream text;
    text << in.rdbuf();
    return parse_config(text.str(), path);
}

}  // namespace coloc::daemon
