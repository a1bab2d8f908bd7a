// The job records of colocd's jobs and history replies, written by colocd and read by colocctl
// from the same structs: a job, its placements and (history of one job) its colocations.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace coloc::proto {

using json = nlohmann::json;

// One of a job's placements on a node.
struct PlacementRecord {
    std::int64_t decision = 0;
    std::string node;
    std::string mode;
    std::vector<int> gpus;
    double predicted_slowdown = 1.0;
    std::string source;  // colocd | fallback | reconciled
    std::int64_t created = 0;
    std::optional<std::int64_t> ended;

    json to_json() const;
    static PlacementRecord from_json(const json& j);
};

// Who a job shared something with on a node, from when until when.
struct ColocationRecord {
    std::int64_t job_id = 0;
    std::int64_t other = 0;
    std::string node;
    std::string sharing;  // gpu | island | switch | node | link
    std::int64_t start = 0;
    std::optional<std::int64_t> end;

    json to_json() const;
    static ColocationRecord from_json(const json& j);
};

struct JobRecord {
    std::int64_t job_id = 0;
    std::int64_t uid = -1;
    std::string user, job_name, partition, profile, state;  // profile: as the user typed it
    bool profile_unknown = false;  // colocd's catalogue lacks `profile`: the job runs as the default
    // Its latest observation's iteration time against its profile's solo time, where observed.
    std::optional<double> measured_slowdown;
    std::int64_t submit = 0;  // Slurm's submit time where colocd read it, else when colocd first saw the job
    std::optional<std::int64_t> start, end;
    std::optional<int> exit_status;
    std::optional<double> elapsed_s;
    std::optional<double> time_limit_s;  // Slurm's, where colocd read it
    // What the job would have taken alone: its elapsed time at the mean speed its iteration
    // reports show against its profile's solo time; none without reports (a replay's work).
    std::optional<double> work_s;
    std::optional<std::string> end_reason;
    std::vector<PlacementRecord> placements;
    std::optional<std::vector<ColocationRecord>> colocations;  // only in the history of one job

    // What colocd uses: "default (unknown: NAME)" for an unknown profile, "default" for none.
    std::string profile_shown() const;

    json to_json() const;
    // Reads what to_json wrote; a missing or null key keeps its default (colocctl shows what
    // an older colocd sends).
    static JobRecord from_json(const json& j);
};

}  // namespace coloc::proto
