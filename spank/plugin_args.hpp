// The plugstack.conf arguments of spank_coloc.so, e.g.
//   optional spank_coloc.so endpoint=ipc:///run/coloc/colocd.sock timeout_ms=250 mode=auto
//            gpus=4 slots_per_gpu=2 state_dir=/run/coloc munge_socket=/run/munge/munge.socket.2
//            server_key=/etc/coloc/colocd.pub
// A bad argument must never fail a job: it is reported and its default kept.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "proto/mode.hpp"
#include "spank/device_fence.hpp"

namespace coloc::spank {

struct PluginConfig {
    std::string endpoint = "ipc:///run/coloc/colocd.sock";
    int timeout_ms = 250;                       // one hard deadline for the whole place exchange
    std::optional<proto::GpuMode> mode;         // nullopt: auto, colocd decides
    int gpus = 0;                               // this node's GPUs; 0 = no bind fallback possible
    int slots_per_gpu = 0;                      // jobs that may share one GPU; 0 = no bind fallback possible
    std::string state_dir = "/run/coloc-node";  // root's; colocd's /run/coloc may belong to its user
    std::string munge_socket;                   // empty = munge's own default
    std::string slot_gres = "gpuslot";          // the count-only GRES whose count is the bind slots
    std::string timings_file;                   // one line of stage timings per step; empty = none
    std::string cluster;                        // the Slurm cluster meant; empty = name none
    // The device fence of bind-mode steps (spank/device_fence.hpp). on: a step that cannot be
    // fenced runs unfenced, logged; required: it is refused; off: no fence.
    enum class Isolate { Off, On, Required } isolate = Isolate::On;
    DeviceCgroup device_cgroup = DeviceCgroup::Auto;
    std::string gpu_devices = "/dev/nvidia";  // GPU i's device file is this followed by i
    // colocd's public CURVE key (Z85), from server_key=FILE or else kDefaultServerKeyFile when
    // that exists; empty = replies unauthenticated. When the file named cannot be used, the
    // plugin asks colocd nothing (and falls back): server_key_problem says why.
    std::string server_key_file;
    std::string server_key;
    std::string server_key_problem;
    // The endpoint jobs are given (COLOC_ENDPOINT) for their reports: one of colocd.yaml's
    // listen_plain, for reporters without CURVE; empty = `endpoint`.
    std::string report_endpoint;

    const std::string& job_endpoint() const { return report_endpoint.empty() ? endpoint : report_endpoint; }

    bool bind_fallback_possible() const { return gpus > 0 && slots_per_gpu > 0; }
};

inline constexpr const char* kDefaultServerKeyFile = "/etc/coloc/colocd.pub";

struct ParsedArgs {
    PluginConfig config;
    std::vector<std::string> errors;  // one entry per rejected argument, for one log line
};

ParsedArgs parse_plugin_args(const std::vector<std::string>& args);
ParsedArgs parse_plugin_args(int argc, char** argv);

// "timeout_ms=x (not an integer); foo=1 (unknown argument)": the one line to log.
std::string join_errors(const std::vector<std::string>& errors);

}  // namespace coloc::spank
