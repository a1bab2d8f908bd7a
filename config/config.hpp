// colocd.yaml: what the daemon listens on, where it keeps history, who may do what, and what
// the cluster is made of. Every error names the file, the line and the key. colocd and colocctl
// both read it; its names stay in coloc::daemon, the namespace of colocd's code that uses them.
#pragma once

#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/admission_config.hpp"
#include "config/elastic_config.hpp"
#include "config/steering_config.hpp"
#include "model/hardware.hpp"
#include "model/profile.hpp"
#include "place/topology.hpp"
#include "proto/mode.hpp"

namespace coloc::daemon {

inline const char* to_string(proto::GpuMode mode) { return proto::mode_name(mode); }

struct Config {
    std::string path;     // where it was read from
    std::string cluster;  // the Slurm cluster served; requests naming another are refused
    std::vector<std::string> listen = {"ipc:///run/coloc/colocd.sock"};
    std::string database = "/var/lib/coloc/coloc.db";
    std::string pidfile;       // empty = none
    std::string munge_socket;  // empty = munge's default
    // colocd's CURVE secret key (made at first start; the public key beside it, in FILE.pub):
    // clients then know a reply comes from colocd. Empty = replies are not authenticated.
    std::string server_key_file;
    // Endpoints served without CURVE even with a key: for job-side reporters that cannot speak it.
    std::vector<std::string> listen_plain;
    int credential_max_age_s = 300;
    std::vector<std::string> admins = {"root"};  // user names or numeric uids
    std::string slurm_user = "root";             // may report for slurmstepd
    std::string model = "coloc";                 // baseline | coloc
    std::string profiles;                        // profile catalogue (YAML), empty = built-in
    int explain_candidates = 5;                  // alternatives kept per decision
    int metrics_port = 0;                        // Prometheus over HTTP, 0 = off
    std::string metrics_address = "127.0.0.1";
    int reconcile_interval_s = 60;  // ask Slurm what runs; 0 = never
    // Learning from ended jobs' elapsed times (daemon/service/elapsed.cpp): runs shorter than
    // elapsed_min_s are left out; pair delays are refitted every elapsed_refit_every usable runs
    // (at least a tenth of the window's) over the latest elapsed_window of them (a refit's cost
    // grows with the window).
    int elapsed_min_s = 300;
    int elapsed_refit_every = 10;
    int elapsed_window = 1000;
    // While the database cannot be written: history records kept in memory at most, and the
    // first and the longest wait between tries to store them.
    std::size_t database_backlog_max = 100000;
    int database_retry_s = 1;
    int database_retry_max_s = 30;
    // Each commit synced to disk before its reply (full), or only written (normal: a colocd that
    // dies loses nothing, a host that crashes or a file system that fails may lose the last ones).
    bool database_sync_full = true;
    // The backlog's copy on disk, on space reserved at start (daemon/store/journal.hpp); empty:
    // beside the database, database_journal_path() says where.
    std::string database_journal;
    int database_journal_reserve_mb = 64;
    std::map<std::string, proto::GpuMode> partition_modes;
    proto::GpuMode default_mode = proto::GpuMode::Narrow;
    // Narrow mode keeps every GPU a step holds (it may reorder them): a job billed for 8 GPUs that
    // starts `torchrun --nproc_per_node=8` needs all 8. An admin may let a profile that asks for
    // fewer GPUs narrow the step to them.
    bool narrow_may_drop_gpus = false;
    std::map<std::string, proto::GpuMode> node_modes;  // per node, from `nodes: mode:`
    place::Topology topology;                          // each node type with its GPUs' type and memory
    // Nodes, GPUs and slots from slurmctld (config/slurm_layout.hpp): on when colocd.yaml names
    // no nodes; colocd.yaml's nodes then override Slurm's. Reread every interval (0 = only at start).
    bool slurm_layout = false;
    int slurm_layout_interval_s = 300;
    // Parameters learned per GPU type (`model_params:`, colocctl fit --params-out's JSON text,
    // read by model::learned_gpu_params), and the files they came from. Kept as text: the tools
    // that read colocd.yaml without the model (its fuzz target) link no model.
    std::map<std::string, std::string> model_params;
    std::map<std::string, std::string> model_params_files;
    // What colocd.yaml leaves to a default an admin should hear of; colocd logs each at start.
    std::vector<std::string> notes;
    SteeringConfig steering;    // node weights and features in Slurm
    ElasticConfig elastic;      // bind nodes' gpuslot counts in Slurm (elastic_slots:)
    AdmissionConfig admission;  // when bind jobs start, per job (admission:)
};

// How many of the `held` GPUs Slurm gave a narrow step colocd chooses for it.
int narrow_gpu_count(const Config& cfg, const model::JobProfile& profile, int held);

class ConfigError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

Config load_config(const std::string& path);
// Where the backlog's journal is: database_journal, or the database's path with ".backlog".
std::string database_journal_path(const Config& cfg);

// For tests: the same from text, `name` standing in for the path in messages.
Config parse_config(const std::string& text, const std::string& name);

}  // namespace coloc::daemon
