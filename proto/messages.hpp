// The launch-path messages the plugin sends and colocd answers. Each decoder validates every
// field and throws ProtoError(bad_field) naming the first bad one.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/limits.hpp"
#include "proto/mode.hpp"
#include "proto/ops.hpp"

namespace coloc::proto {

using json = nlohmann::json;

inline constexpr std::int64_t kMaxJobId = 0xFFFFFFFFLL;

// A fallback placement the plugin made on its own while colocd could not answer; when the job
// also ended before colocd heard of it, `ended` (epoch seconds) and the outcome come along.
struct LocalPlacement {
    std::int64_t job_id = 0;
    std::vector<int> gpus = {};
    std::int64_t since = 0;  // epoch seconds
    std::int64_t ended = 0;  // 0 = still running
    int exit_status = 0;
    double elapsed_s = 0;
};

struct PlaceRequest {
    std::int64_t job_id = 0;
    std::int64_t job_uid = -1;
    std::string node;  // the node this plugin runs on (SLURMD_NODENAME)
    std::string partition;
    std::string job_name;
    std::string profile;          // --coloc-profile, empty = none given
    std::optional<GpuMode> mode;  // nullopt: "auto", colocd decides
    int slots = 0;                // bind: GPUs (one slot each) the job asked for here
    // Bind with `slots` 0: the count-only GRES whose count on this node colocd reads from Slurm
    // itself (the plugin has no slurmctld call on the launch path). Empty = `slots` is the count.
    std::string slots_gres;
    std::vector<int> slurm_gpus;         // narrow: GPUs Slurm gave the step on this node
    std::vector<std::string> job_nodes;  // every node of the job, in Slurm's order
    std::vector<LocalPlacement> unreported;

    json to_json() const;
    static PlaceRequest from_json(const json& body);
};

// Every ok reply to a request that wrote to colocd's history carries "durability": "stored"
// (committed) or "queued" (colocd's database cannot be written now: colocd keeps the write in a
// bounded backlog and stores it, in order, once it can; a queued write is lost if colocd stops
// before that). Replies that wrote nothing, and replies of older colocds, have no such field.
inline constexpr const char* kDurability = "durability";
inline constexpr const char* kStored = "stored";
inline constexpr const char* kQueued = "queued";

struct PlaceReply {
    std::int64_t decision = 0;
    GpuMode mode = GpuMode::Narrow;
    std::vector<int> gpus = {};
    double predicted_slowdown = 1.0;
    bool reused = false;          // an earlier decision for the same job and node
    std::string durability = {};  // stored | queued | empty: nothing written (reused) or an older colocd
    // The bind slots colocd read from Slurm for a request that named `slots_gres`; 0 = the job
    // holds none here (nothing placed, decision 0); -1 = not read (absent on the wire).
    int slots = -1;
    // The job's slot for its communication bursts on a shared link (model/phase_offset.hpp): the
    // iteration offset on the wall-clock grid and the period it assumes; unset when none.
    std::optional<double> phase_offset_s = std::nullopt;
    std::optional<double> phase_period_s = std::nullopt;
    bool profile_unknown = false;  // the request's profile is not in colocd's catalogue

    json to_json() const;
    static PlaceReply from_json(const json& reply);
};

struct StartedReport {
    std::int64_t job_id = 0;
    std::int64_t job_uid = -1;
    std::string node;
    std::int64_t decision = 0;  // 0 when the plugin placed on its own
    std::vector<int> gpus = {};
    std::int64_t time = 0;

    json to_json() const;
    static StartedReport from_json(const json& body);
};

struct EndedReport {
    std::int64_t job_id = 0;
    std::string node;
    int exit_status = 0;
    double elapsed_s = 0;
    std::int64_t time = 0;

    json to_json() const;
    static EndedReport from_json(const json& body);
};

// "0,2,3": how CUDA_VISIBLE_DEVICES names GPUs. parse_gpu_list throws ProtoError on garbage.
std::string gpu_list(const std::vector<int>& gpus);
std::vector<int> parse_gpu_list(const std::string& text);

}  // namespace coloc::proto
