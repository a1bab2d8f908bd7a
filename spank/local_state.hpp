// The node-local record of which job holds which GPUs on this node, one file per node name
// (several slurmd may run on one host), shared by every slurmstepd on the node under flock.
// It lets the plugin choose GPUs on its own when colocd cannot answer (bind mode), lets later
// steps of a job reuse the job's decision, and carries what colocd has not heard yet: fallback
// placements and job ends that could not be delivered, sent along with the next place request
// ("unreported") or by a later epilog. A step that cannot get the lock in time leaves what it
// did as a note beside the file (<node>.notes/); the next step to take the lock merges it, so a
// busy node loses no placement and no end.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "proto/messages.hpp"

namespace coloc::spank {

// What a job holds on this node. The record spells the modes as proto::mode_name does, and
// None as "none".
enum class HoldingMode {
    None,     // the job asked for no GPU on this node
    Bind,     // holds one slot on each of its GPUs
    Narrow,   // a subset of Slurm's gres/gpu GPUs
    Observe,  // Slurm's GPUs, recorded only
};

const char* holding_mode_name(HoldingMode mode);
// nullopt for any other text.
std::optional<HoldingMode> parse_holding_mode(std::string_view name);

struct Holding {
    std::int64_t job_id = 0;
    HoldingMode mode = HoldingMode::None;
    std::vector<int> gpus = {};  // physical GPU indices
    std::int64_t decision = 0;   // colocd's decision id; 0 = chosen here while colocd was away
    bool keep_slurm = false;     // apply nothing: Slurm's own environment stays (narrow fallback)
    bool reported = true;        // false: colocd has not heard of this placement yet
    std::int64_t since = 0;      // epoch seconds of the placement, for `ended`'s elapsed time
    // Set by the job's epilog. An ended holding stays only until colocd has heard of the end.
    std::int64_t ended = 0;  // epoch seconds; 0 = the job still runs here
    int exit_status = 0;
    double elapsed_s = 0;

    bool active() const { return ended == 0; }
};

struct NodeState {
    std::vector<Holding> holdings;

    // The job's running holding here (a requeued job may also have an ended one).
    const Holding* find(std::int64_t job_id) const;
};

inline constexpr std::size_t kMaxUnreported = 64;  // proto's limit per place request
inline constexpr std::size_t kMaxEnded = 256;      // older undelivered ends are dropped

// Slots in use on each of `gpus` GPUs: one per running bind holding naming the GPU.
std::vector<int> slot_use(const NodeState& state, int gpus);

// Those of `chosen` (colocd's GPUs for a job) that have no free slot left in `state`: a local
// choice colocd has not heard of yet may have taken them.
std::vector<int> full_gpus(const NodeState& state, const std::vector<int>& chosen, int gpus, int slots_per_gpu);

struct LocalChoice {
    std::vector<int> gpus;
    bool fewer = false;          // fewer GPUs with a free slot than the job asked for
    bool over_capacity = false;  // no GPU had a free slot (the record disagrees with Slurm's count)
};

// The least-occupied GPUs that still have a free slot, `want` distinct ones at most (ties: lowest
// index). Never a full GPU unless none has a free slot: then the least-occupied one, flagged, so
// that the job still gets a GPU.
LocalChoice choose_local(const NodeState& state, int gpus, int slots_per_gpu, int want);

// What colocd has not heard of, oldest first, at most kMaxUnreported: fallback placements, and
// ends it missed (with `ended` set).
std::vector<proto::LocalPlacement> unreported(const NodeState& state);
// colocd took `sent`: placements become reported, delivered ends are forgotten.
void mark_reported(NodeState& state, const std::vector<proto::LocalPlacement>& sent);

// Adds `h` unless its job already runs here (first writer wins, e.g. two steps of one job
// starting at once); returns the job's running holding either way.
Holding record(NodeState& state, Holding h);
// The job's end on this node: its running holding becomes an ended one (freeing its slots)
// that waits for colocd to hear of it; a holding colocd never needs to hear of (no GPU) is
// dropped. Returns the ended holding, if any.
std::optional<Holding> end_job(NodeState& state, std::int64_t job_id, std::int64_t now, int exit_status);

nlohmann::json state_to_json(const NodeState& state);
// Tolerant: entries that do not parse are skipped and counted in `skipped`.
NodeState state_from_json(const nlohmann::json& j, int& skipped);

class StateError : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The file pair <dir>/<node>.lock (flock) and <dir>/<node>.json (replaced atomically by rename).
class StateFile {
public:
    StateFile(std::string dir, const std::string& node);

    // Takes the lock (waiting at most `wait_ms`), loads the state, merges the notes left by
    // steps that could not take the lock, runs `fn`, and writes the state back when `fn` returns
    // true or notes were merged. Returns a warning to log when the file was unreadable and was
    // started afresh; throws StateError when the lock or the file cannot be used.
    std::string update(int wait_ms, const std::function<bool(NodeState&)>& fn) const;

    // The state as last written, read without the lock (the file is replaced whole, so a read
    // sees one version); empty when there is none or it does not parse. Notes are not included.
    NodeState peek() const;

    // Leaves `h` for the next update to merge, without the lock: a running holding is added
    // unless the job already runs here; an ended one (ended != 0) ends the job's running holding.
    // Throws StateError when the note cannot be written.
    void leave_note(const Holding& h) const;

    const std::string& data_path() const { return data_path_; }
    const std::string& notes_dir() const { return notes_dir_; }

private:
    std::string dir_;
    std::string lock_path_;
    std::string data_path_;
    std::string notes_dir_;
};

}  // namespace coloc::spank
