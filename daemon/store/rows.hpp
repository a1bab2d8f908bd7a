// The rows of colocd's history, as the store reads and writes them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace coloc::daemon {

// Where a job is in colocd's history; stored (jobs.state) and shown as its name.
enum class JobState { Placed, Running, Ended };
const char* to_string(JobState state);
// The state a stored name stands for; throws StoreError naming the text when it is none.
JobState job_state_from(std::string_view name);

struct JobRow {
    std::int64_t job_id = 0;
    std::int64_t uid = -1;
    std::string user = {}, job_name = {}, partition = {}, profile = {};
    std::int64_t first_seen = 0;
    std::optional<std::int64_t> start = std::nullopt, end = std::nullopt;
    std::optional<int> exit_status = std::nullopt;
    std::optional<double> elapsed_s = std::nullopt;
    JobState state = JobState::Placed;
    std::optional<std::string> end_reason =
        std::nullopt;  // why colocd closed it itself (reconciliation); none = reported
    // Slurm's submit time and time limit, where colocd read the job in Slurm's queue before it
    // started (admission and elastic slots read it; a job that started between reads has none).
    std::optional<std::int64_t> submitted = std::nullopt;
    std::optional<double> time_limit_s = std::nullopt;
};

struct PlacementRow {
    std::int64_t decision = 0;
    std::int64_t job_id = 0;
    std::string node = {};
    std::string mode = {};
    std::vector<int> gpus = {};
    double predicted_slowdown = 1.0;
    std::string source =
        "colocd";  // colocd | fallback (the plugin chose while colocd was away) | reconciled (adopted from Slurm)
    std::int64_t created = 0;
    std::optional<std::int64_t> ended = std::nullopt;
    std::string alternatives = "[]";  // JSON: the ranked candidates, for explain
};

struct ColocationRow {
    std::int64_t job_a = 0, job_b = 0;
    std::string node = {};
    std::string sharing = {};  // gpu | island | switch | node | link
    std::int64_t start = 0;
    std::optional<std::int64_t> end = std::nullopt;
};

// One stored report of a job's iteration time, with the neighbours colocd saw then.
struct ObservationRow {
    std::int64_t time = 0;
    double iter_time_s = 0;
    std::string neighbours = "[]";  // JSON: [{"profile", "where"}]
};

}  // namespace coloc::daemon
