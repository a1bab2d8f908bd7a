// colocd's history on disk: jobs, placements (decisions), co-location intervals, outcomes and
// fitted model parameters. WAL; schema versioned with PRAGMA user_version and migrated forward;
// every write is one transaction, committed before the caller acknowledges it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/sqlite.hpp"
#include "daemon/wal_checkpointer.hpp"

namespace coloc::daemon {

inline constexpr int kSchemaVersion = 4;

struct JobRow {
    std::int64_t job_id = 0;
    std::int64_t uid = -1;
    std::string user, job_name, partition, profile;
    std::int64_t first_seen = 0;
    std::optional<std::int64_t> start, end;
    std::optional<int> exit_status;
    std::optional<double> elapsed_s;
    std::string state = "placed";  // placed | running | ended | lost
    std::optional<std::string> end_reason;  // why colocd closed it itself (reconciliation); none = reported
};

struct PlacementRow {
    std::int64_t decision = 0;
    std::int64_t job_id = 0;
    std::string node;
    std::string mode;
    std::vector<int> gpus;
    double predicted_slowdown = 1.0;
    std::string source = "colocd";  // colocd | fallback (the plugin chose while colocd was away) | reconciled (adopted from Slurm)
    std::int64_t created = 0;
    std::optional<std::int64_t> ended;
    std::string alternatives = "[]";  // JSON: the ranked candidates, for explain
};

struct ColocationRow {
    std::int64_t job_a = 0, job_b = 0;
    std::string node;
    std::string sharing;  // gpu | island | switch | node | link
    std::int64_t start = 0;
    std::optional<std::int64_t> end;
};

class Store {
public:
    explicit Store(const std::string& path, bool synchronous_full = false);
    ~Store();

    int schema_version();

    // A decision and the co-location intervals it opens, in one transaction. Fills
    // `placement.decision` with the new id.
    void record_placement(const JobRow& job, PlacementRow& placement, const std::vector<ColocationRow>& opened);
    void record_started(std::int64_t job_id, std::int64_t time);
    // Closes the job's placement on `node`, its open intervals there, and the job itself when
    // `job_done` (no other node still runs it).
    void record_ended(std::int64_t job_id, const std::string& node, std::int64_t time, int exit_status,
                      double elapsed_s, bool job_done);
    // The same, for an end colocd learned from Slurm rather than from the plugin: the job is
    // marked with `reason`; a later report from the plugin replaces the outcome and the mark.
    void record_closed_by_colocd(std::int64_t job_id, const std::string& node, std::int64_t time,
                                 std::optional<int> exit_status, bool job_done, const std::string& reason);

    std::optional<JobRow> job(std::int64_t job_id);
    // Most recent first; uid < 0 = every user's.
    std::vector<JobRow> jobs(std::int64_t uid, int limit);
    std::vector<PlacementRow> placements_of(std::int64_t job_id);
    std::vector<PlacementRow> open_placements();
    std::vector<ColocationRow> colocations_of(std::int64_t job_id);
    std::int64_t count_jobs();

    void save_model_params(const std::string& name, const std::string& json, std::int64_t time);
    // An observed iteration time and the model parameters it updated, in one transaction.
    void record_observation(std::int64_t job_id, std::int64_t time, double iter_time_s,
                            const std::string& neighbours_json, const std::string& model_name,
                            const std::string& params_json);
    std::int64_t count_observations();
    std::optional<std::string> load_model_params(const std::string& name);

    Database& db() { return *db_; }

private:
    struct Statements;
    void migrate();
    std::unique_ptr<Database> db_;
    std::unique_ptr<Statements> st_;
    std::unique_ptr<WalCheckpointer> checkpointer_;  // stops before db_ closes
};

// The schema as a list of migrations: migrations()[i] takes user_version i to i + 1.
const std::vector<std::string>& migrations();

}  // namespace coloc::daemon
