// colocd's history on disk: jobs, placements (decisions), co-location intervals, outcomes and
// fitted model parameters. WAL; schema versioned with PRAGMA user_version and migrated forward;
// every write is one transaction (or a savepoint in a round's), committed before the caller
// acknowledges it as stored. Every write goes through one place (write()), which stores it or,
// while the database cannot be written, keeps it in the backlog (daemon/store/backlog.hpp) and
// stores it later, in order; the reads colocd decides on see the backlog too.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/store/backlog.hpp"
#include "daemon/store/journal.hpp"
#include "daemon/store/rows.hpp"
#include "daemon/store/sqlite.hpp"
#include "daemon/store/wal_checkpointer.hpp"
#include "daemon/store/wal_sync.hpp"

namespace coloc::daemon {

inline constexpr int kSchemaVersion = 9;

// Whether a write is in the database or only in the backlog.
enum class Durability { Stored, Queued };
const char* to_string(Durability d);

class Store {
public:
    explicit Store(const std::string& path, bool synchronous_full = false, BacklogSettings backlog = {});
    ~Store();

    int schema_version();

    // A decision and the co-location intervals it opens, in one transaction. Fills
    // `placement.decision` with the new id.
    void record_placement(const JobRow& job, PlacementRow& placement, const std::vector<ColocationRow>& opened);
    void record_started(std::int64_t job_id, std::int64_t time);
    // The job's submit time and time limit (nullopt: none) as Slurm showed them after its
    // launch; what the job's row already holds is kept.
    void record_slurm_times(std::int64_t job_id, std::int64_t submitted, std::optional<double> time_limit_s);
    // The job's open placement on `node` runs on `gpus` instead, chosen by the plugin there.
    void record_moved(std::int64_t job_id, const std::string& node, const std::vector<int>& gpus);
    // Closes the job's placement on `node`, its open intervals there, and the job itself when
    // `job_done` (no other node still runs it).
    void record_ended(std::int64_t job_id, const std::string& node, std::int64_t time, int exit_status,
                      double elapsed_s, bool job_done);
    // The same, for an end colocd learned from Slurm rather than from the plugin: the job is
    // marked with `reason`; a later report from the plugin replaces the outcome and the mark.
    void record_closed_by_colocd(std::int64_t job_id, const std::string& node, std::int64_t time,
                                 std::optional<int> exit_status, bool job_done, const std::string& reason);

    // What node steering advised for a decision (JSON), if anything.
    void record_steering_advice(std::int64_t decision, std::int64_t job_id, const std::string& node,
                                const std::string& advice_json);
    std::optional<std::string> steering_advice(std::int64_t decision);

    // Group commit: the writes between begin_round() and finish_round() share one transaction.
    // finish_round() commits it and says where the round's writes are: stored, or queued when
    // the database could not take them (then they are in the backlog, in order). A failure that
    // is no write trouble (a broken constraint) throws; abandon_round() then drops the round.
    // With synchronous_full the commit is written, not yet synced: "stored" holds once
    // wal_sync() has synced sync_ticket() (daemon/store/wal_sync.hpp).
    void begin_round();
    Durability finish_round();
    void abandon_round();
    // What the replies of the round just finished wait for: its own commit's ticket, synced,
    // failed or not yet; for a round that committed nothing the latest commit's ticket while it
    // is not yet synced, else 0. The sync of a ticket covers every commit before it, so a round
    // that wrote nothing waits for the rounds before it, and no reply overtakes an earlier one.
    std::uint64_t sync_ticket() const;
    // Syncs the rounds' commits apart from the request thread; null without synchronous_full.
    WalSync* wal_sync() { return wal_sync_.get(); }
    const WalSync* wal_sync() const { return wal_sync_.get(); }
    // A round's sync failed: its writes are in the database, unacknowledged and maybe not on
    // disk. The database counts as unwritable (later writes queue) until a retry has checkpointed
    // the whole WAL into the database file and synced it.
    void sync_failed(const std::string& why);
    // A unit of writes (a request): the backlog being full refuses only a unit's first write
    // (BacklogFull), so that a unit is never cut in half. unit_writes() counts its writes.
    void begin_unit() { unit_writes_ = 0; }
    std::size_t unit_writes() const { return unit_writes_; }

    // Tries to store the backlog when a retry is due (writes at most `budget_ms` at a time so
    // that the request loop goes on); retry_backlog_now() tries at once and until it is done
    // or fails. Both return the records stored.
    std::size_t retry_backlog_if_due(int budget_ms = 100);
    std::size_t retry_backlog_now();
    const StoreBacklog& backlog() const { return backlog_; }
    // The backlog's copy on disk; null when the settings name none.
    const Journal* journal() const { return journal_.get(); }
    // Why the journal cannot be written; empty while it can.
    const std::string& journal_trouble() const { return journal_trouble_; }

    // Reads: what is stored, with the backlog applied (job, placements, open placements, model
    // parameters); the listings (jobs, colocations, counts) show what is stored only.
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
    // The iteration time the job's latest stored observation measured, if any.
    std::optional<double> last_iter_time(std::int64_t job_id);
    // The mean of the job's stored observations' speeds against `solo_iter_s` (each at most 1);
    // reports come at a steady interval, so it is the job's mean speed over its run. None without.
    std::optional<double> mean_speed(std::int64_t job_id, double solo_iter_s);
    // Every stored observation of the job, in the order it was reported.
    std::vector<ObservationRow> observations_of(std::int64_t job_id);
    std::optional<std::string> load_model_params(const std::string& name);

    // A figure of a job that ran alone; solo_runs() reads back what is stored, by key and job.
    void record_solo_run(const SoloRunWrite& run);
    std::vector<SoloRunWrite> solo_runs();

    Database& db() { return *db_; }

private:
    struct Statements;
    void migrate();
    // Stores `w` (in the round's transaction when one is open) or queues it; see the class.
    void write(StoreWrite w);
    void apply(const StoreWrite& w);  // the SQL of one write, no transaction of its own
    // Write trouble: the round (if any) is rolled back and its writes go to the backlog.
    void became_unwritable(const std::string& why);
    // Queues `w` in the backlog and appends it to the journal (not yet synced). sync_queued()
    // makes what was queued durable before it is acknowledged; drop_queued_after() takes back
    // what was queued after a mark, never acknowledged. Journal trouble throws StoreError (not
    // write trouble): nothing more is acknowledged until the backlog is stored.
    void queue(StoreWrite w);
    void sync_queued();
    void drop_queued_after(std::size_t backlog_mark, std::uint64_t journal_mark, std::uint64_t seq_mark);
    // Notes and logs why the journal failed; it is retried once the backlog is stored.
    void journal_failed(const JournalError& e);
    // Journal trouble refuses a unit at its first write (BacklogFull), as a full backlog does.
    void refuse_unit_if_journal_cannot_take_it();
    void open_journal();   // and replays what it holds that the database has not stored
    void clear_journal();  // the backlog is stored
    std::uint64_t applied_seq();
    void mark_applied(std::uint64_t seq);
    std::size_t store_backlog(int budget_ms);
    std::size_t store_chunk(std::size_t n);

    std::unique_ptr<Database> db_;
    std::unique_ptr<Statements> st_;
    StoreBacklog backlog_;
    std::int64_t next_decision_ = 1;  // decision ids are colocd's, so a queued decision has one
    bool in_round_ = false;
    std::vector<StoreWrite> round_writes_;  // what the open round's transaction holds
    std::size_t unit_writes_ = 0;
    std::unique_ptr<Journal> journal_;
    std::string journal_trouble_;  // why the journal failed; empty while it works
    std::uint64_t next_seq_ = 1;
    struct QueueMark {
        std::size_t backlog = 0;
        std::uint64_t journal = 0, seq = 0;
    } round_mark_;                                   // where the open round's queued writes begin
    std::unique_ptr<WalCheckpointer> checkpointer_;  // stops before db_ closes
    std::unique_ptr<WalSync> wal_sync_;              // with synchronous_full
    bool wal_suspect_ = false;                       // a sync failed; see sync_failed()
    bool deferred_sync_ = false;                     // synchronous=NORMAL for the round's commit
    std::uint64_t round_ticket_ = 0;                 // the WAL sync ticket of the round's commit, if any
    void checkpoint_suspect_wal();
    void end_deferred_sync();  // synchronous=FULL again, outside the round's transaction
    void watch_wal_file();     // the WAL file wal_sync_ syncs
    sqlite3_file* synced_file_ = nullptr;
};

// The schema as a list of migrations: migrations()[i] takes user_version i to i + 1.
const std::vector<std::string>& migrations();

}  // namespace coloc::daemon
