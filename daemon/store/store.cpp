#include "daemon/store/store.hpp"

#include <nlohmann/json.hpp>

namespace coloc::daemon {

const std::vector<std::string>& migrations() {
    static const std::vector<std::string> list = {
        // 0 -> 1: jobs, decisions, who shared what with whom.
        R"sql(
CREATE TABLE jobs (
    job_id      INTEGER PRIMARY KEY,
    uid         INTEGER NOT NULL,
    user        TEXT NOT NULL DEFAULT '',
    job_name    TEXT NOT NULL DEFAULT '',
    partition   TEXT NOT NULL DEFAULT '',
    profile     TEXT NOT NULL DEFAULT '',
    first_seen  INTEGER NOT NULL,
    start       INTEGER,
    end         INTEGER,
    exit_status INTEGER,
    elapsed_s   REAL,
    state       TEXT NOT NULL
);
CREATE TABLE placements (
    decision           INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id             INTEGER NOT NULL REFERENCES jobs(job_id),
    node               TEXT NOT NULL,
    mode               TEXT NOT NULL,
    gpus               TEXT NOT NULL,
    predicted_slowdown REAL NOT NULL,
    source             TEXT NOT NULL,
    created            INTEGER NOT NULL,
    ended              INTEGER,
    alternatives       TEXT NOT NULL DEFAULT '[]',
    UNIQUE (job_id, node)
);
CREATE TABLE colocations (
    id      INTEGER PRIMARY KEY,
    job_a   INTEGER NOT NULL,
    job_b   INTEGER NOT NULL,
    node    TEXT NOT NULL,
    sharing TEXT NOT NULL,
    start   INTEGER NOT NULL,
    end     INTEGER
);
CREATE INDEX colocations_a ON colocations(job_a);
CREATE INDEX colocations_b ON colocations(job_b);
)sql",
        // 1 -> 2: what the model learns from, and what it learned.
        R"sql(
CREATE TABLE observations (
    id          INTEGER PRIMARY KEY,
    job_id      INTEGER NOT NULL,
    time        INTEGER NOT NULL,
    iter_time_s REAL NOT NULL,
    neighbours  TEXT NOT NULL
);
CREATE TABLE model_params (
    name    TEXT PRIMARY KEY,
    params  TEXT NOT NULL,
    updated INTEGER NOT NULL
);
CREATE INDEX placements_open ON placements(ended) WHERE ended IS NULL;
)sql",
        // 2 -> 3: why colocd closed a job itself (reconciliation with Slurm).
        R"sql(
ALTER TABLE jobs ADD COLUMN end_reason TEXT;
)sql",
        // 3 -> 4: what node steering advised when a placement was made (colocctl explain).
        R"sql(
CREATE TABLE steering_advice (
    decision INTEGER PRIMARY KEY,
    job_id   INTEGER NOT NULL,
    node     TEXT NOT NULL,
    advice   TEXT NOT NULL
);
)sql",
        // 4 -> 5: a job's later neighbours are found by where and when they started (one index
        // page per placement), not by their id (one page per neighbour: every placement wrote
        // into the index pages of all the jobs already on its node).
        R"sql(
CREATE INDEX colocations_at ON colocations(node, start);
DROP INDEX colocations_b;
)sql",
        // 5 -> 6: a job's latest observation, shown beside its predicted slowdown.
        R"sql(
CREATE INDEX observations_job ON observations(job_id, id);
)sql",
        // 6 -> 7: what jobs that ran alone took: their profile's solo figures, or (a job that
        // names no catalogued profile) those of a profile learned for its user and job name.
        R"sql(
CREATE TABLE solo_runs (
    key         TEXT NOT NULL,
    learned     INTEGER NOT NULL,
    job_id      INTEGER NOT NULL,
    iter_time_s REAL,
    runtime_s   REAL,
    time        INTEGER NOT NULL,
    PRIMARY KEY (key, job_id)
);
)sql",
        // 7 -> 8: the last journal record stored (daemon/store/journal.hpp), so that a record
        // replayed again at a start is not stored twice.
        R"sql(
CREATE TABLE journal_state (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    applied_seq INTEGER NOT NULL
);
INSERT INTO journal_state (id, applied_seq) VALUES (1, 0);
)sql",
        // 8 -> 9: when Slurm took the job and its time limit, as colocd read them from Slurm's
        // queue (a replay of the history waits and plans by them).
        R"sql(
ALTER TABLE jobs ADD COLUMN submitted INTEGER;
ALTER TABLE jobs ADD COLUMN time_limit_s REAL;
)sql",
    };
    return list;
}

// Named statements, prepared once per connection.
namespace sql {
constexpr const char* kUpsertJob = R"(
INSERT INTO jobs (job_id, uid, user, job_name, partition, profile, first_seen, state, submitted, time_limit_s)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
ON CONFLICT (job_id) DO UPDATE SET state = CASE WHEN jobs.state = 'ended' THEN jobs.state ELSE excluded.state END,
    submitted = COALESCE(jobs.submitted, excluded.submitted), time_limit_s = COALESCE(jobs.time_limit_s, excluded.time_limit_s))";
constexpr const char* kInsertPlacement = R"(
INSERT INTO placements (decision, job_id, node, mode, gpus, predicted_slowdown, source, created, alternatives)
VALUES (?9, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8))";
// The next decision id: AUTOINCREMENT's counter, so that no id is ever given twice.
constexpr const char* kNextDecision = R"(
SELECT max(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'placements'), 0),
           COALESCE((SELECT max(decision) FROM placements), 0)) + 1)";
constexpr const char* kInsertAdvice =
    "INSERT OR REPLACE INTO steering_advice (decision, job_id, node, advice) VALUES (?1, ?2, ?3, ?4)";
constexpr const char* kInsertColocation = R"(
INSERT INTO colocations (job_a, job_b, node, sharing, start) VALUES (?1, ?2, ?3, ?4, ?5))";
constexpr const char* kMarkStarted = R"(
UPDATE jobs SET start = COALESCE(start, ?2), state = CASE WHEN state = 'placed' THEN 'running' ELSE state END
WHERE job_id = ?1)";
// A job that runs elsewhere than colocd recorded (the plugin found colocd's GPUs full on the
// node and chose there): the open placement says where it really runs, and who chose.
constexpr const char* kMovePlacement = R"(
UPDATE placements SET gpus = ?3, source = 'fallback' WHERE job_id = ?1 AND node = ?2 AND ended IS NULL)";
constexpr const char* kSetTimes = R"(
UPDATE jobs SET submitted = COALESCE(submitted, ?2), time_limit_s = COALESCE(time_limit_s, ?3) WHERE job_id = ?1)";
constexpr const char* kClosePlacement = R"(
UPDATE placements SET ended = ?3 WHERE job_id = ?1 AND node = ?2 AND ended IS NULL)";
// A job's pairs: those it opened when placed (it is job_a), and those opened by jobs placed
// beside it later (it is job_b: on its node, while it ran there). A pair stops sharing when
// the first of the two ends on the pair's node, that is when the first of their placements
// there closed: the end is read from the placements rather than written into every
// neighbour's row at each end (rows stored before schema 5 keep the end written then).
constexpr const char* kColocationsOf = R"(
SELECT c.job_a, c.job_b, c.node, c.sharing, c.start,
       COALESCE(c.end, CASE WHEN a.ended IS NULL THEN b.ended
                            WHEN b.ended IS NULL THEN a.ended
                            ELSE min(a.ended, b.ended) END)
FROM colocations c
LEFT JOIN placements a ON a.job_id = c.job_a AND a.node = c.node
LEFT JOIN placements b ON b.job_id = c.job_b AND b.node = c.node
WHERE c.id IN (SELECT id FROM colocations WHERE job_a = ?1
               UNION ALL
               SELECT n.id FROM placements p JOIN colocations n
                   ON n.node = p.node AND n.start BETWEEN p.created AND COALESCE(p.ended, 9223372036854775807)
               WHERE p.job_id = ?1 AND n.job_b = ?1)
ORDER BY c.id)";
constexpr const char* kEndJob = R"(
UPDATE jobs SET end = ?2, exit_status = ?3, elapsed_s = ?4, state = 'ended', end_reason = NULL WHERE job_id = ?1)";
constexpr const char* kEndJobByColocd = R"(
UPDATE jobs SET end = COALESCE(end, ?2), exit_status = COALESCE(exit_status, ?3), state = 'ended', end_reason = ?4
WHERE job_id = ?1 AND state != 'ended')";
// A job's later figure of one kind replaces its earlier one; the other kind is kept.
constexpr const char* kUpsertSoloRun = R"(
INSERT INTO solo_runs (key, learned, job_id, iter_time_s, runtime_s, time) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
ON CONFLICT (key, job_id) DO UPDATE SET iter_time_s = COALESCE(excluded.iter_time_s, solo_runs.iter_time_s),
    runtime_s = COALESCE(excluded.runtime_s, solo_runs.runtime_s), time = excluded.time)";
constexpr const char* kJobColumns =
    "job_id, uid, user, job_name, partition, profile, first_seen, start, end, exit_status, elapsed_s, state, "
    "end_reason, submitted, time_limit_s";
constexpr const char* kPlacementColumns =
    "decision, job_id, node, mode, gpus, predicted_slowdown, source, created, ended, alternatives";
}  // namespace sql

struct Store::Statements {
    Statement upsert_job, insert_placement, insert_colocation, mark_started, set_times, close_placement, move_placement,
        end_job, end_job_by_colocd, job, jobs_all, jobs_of_uid, placements_of, open_placements, colocations_of,
        count_jobs, save_params, load_params, insert_observation, count_observations, last_observation, mean_speed,
        observations_of, insert_advice, select_advice, upsert_solo_run, solo_runs, applied_seq, set_applied_seq;

    explicit Statements(sqlite3* db)
        : upsert_job(db, sql::kUpsertJob),
          insert_placement(db, sql::kInsertPlacement),
          insert_colocation(db, sql::kInsertColocation),
          mark_started(db, sql::kMarkStarted),
          set_times(db, sql::kSetTimes),
          close_placement(db, sql::kClosePlacement),
          move_placement(db, sql::kMovePlacement),
          end_job(db, sql::kEndJob),
          end_job_by_colocd(db, sql::kEndJobByColocd),
          job(db, std::string("SELECT ") + sql::kJobColumns + " FROM jobs WHERE job_id = ?1"),
          jobs_all(db, std::string("SELECT ") + sql::kJobColumns + " FROM jobs ORDER BY job_id DESC LIMIT ?1"),
          jobs_of_uid(db, std::string("SELECT ") + sql::kJobColumns +
                              " FROM jobs WHERE uid = ?2 ORDER BY job_id DESC LIMIT ?1"),
          placements_of(db, std::string("SELECT ") + sql::kPlacementColumns +
                                " FROM placements WHERE job_id = ?1 ORDER BY decision"),
          open_placements(db, std::string("SELECT ") + sql::kPlacementColumns +
                                  " FROM placements WHERE ended IS NULL ORDER BY decision"),
          colocations_of(db, sql::kColocationsOf),
          count_jobs(db, "SELECT count(*) FROM jobs"),
          save_params(db,
                      "INSERT INTO model_params (name, params, updated) VALUES (?1, ?2, ?3) "
                      "ON CONFLICT (name) DO UPDATE SET params = excluded.params, updated = excluded.updated"),
          load_params(db, "SELECT params FROM model_params WHERE name = ?1"),
          insert_observation(
              db, "INSERT INTO observations (job_id, time, iter_time_s, neighbours) VALUES (?1, ?2, ?3, ?4)"),
          count_observations(db, "SELECT count(*) FROM observations"),
          last_observation(db, "SELECT iter_time_s FROM observations WHERE job_id = ?1 ORDER BY id DESC LIMIT 1"),
          mean_speed(db,
                     "SELECT AVG(MIN(1.0, ?2 / iter_time_s)) FROM observations WHERE job_id = ?1 AND iter_time_s > 0"),
          observations_of(db, "SELECT time, iter_time_s, neighbours FROM observations WHERE job_id = ?1 ORDER BY id"),
          insert_advice(db, sql::kInsertAdvice),
          select_advice(db, "SELECT advice FROM steering_advice WHERE decision = ?1"),
          upsert_solo_run(db, sql::kUpsertSoloRun),
          solo_runs(db,
                    "SELECT key, learned, job_id, iter_time_s, runtime_s, time FROM solo_runs ORDER BY key, job_id"),
          applied_seq(db, "SELECT applied_seq FROM journal_state WHERE id = 1"),
          set_applied_seq(db, "UPDATE journal_state SET applied_seq = ?1 WHERE id = 1") {}
};

namespace {

std::string gpus_text(const std::vector<int>& gpus) { return nlohmann::json(gpus).dump(); }

std::vector<int> gpus_from(const std::string& text) {
    auto j = nlohmann::json::parse(text, nullptr, false);
    std::vector<int> out;
    if (j.is_array())
        for (const auto& e : j)
            if (e.is_number_integer()) out.push_back(e.get<int>());
    return out;
}

JobRow read_job(const Statement& s) {
    JobRow r;
    r.job_id = s.int64(0);
    r.uid = s.int64(1);
    r.user = s.text(2);
    r.job_name = s.text(3);
    r.partition = s.text(4);
    r.profile = s.text(5);
    r.first_seen = s.int64(6);
    if (!s.is_null(7)) r.start = s.int64(7);
    if (!s.is_null(8)) r.end = s.int64(8);
    if (!s.is_null(9)) r.exit_status = static_cast<int>(s.int64(9));
    if (!s.is_null(10)) r.elapsed_s = s.real(10);
    r.state = job_state_from(s.text(11));
    if (!s.is_null(12)) r.end_reason = s.text(12);
    if (!s.is_null(13)) r.submitted = s.int64(13);
    if (!s.is_null(14)) r.time_limit_s = s.real(14);
    return r;
}

PlacementRow read_placement(const Statement& s) {
    PlacementRow p;
    p.decision = s.int64(0);
    p.job_id = s.int64(1);
    p.node = s.text(2);
    p.mode = s.text(3);
    p.gpus = gpus_from(s.text(4));
    p.predicted_slowdown = s.real(5);
    p.source = s.text(6);
    p.created = s.int64(7);
    if (!s.is_null(8)) p.ended = s.int64(8);
    p.alternatives = s.text(9);
    return p;
}

}  // namespace

const char* to_string(JobState state) {
    switch (state) {
        case JobState::Placed:
            return "placed";
        case JobState::Running:
            return "running";
        case JobState::Ended:
            return "ended";
    }
    return "?";
}

JobState job_state_from(std::string_view name) {
    for (const JobState state : {JobState::Placed, JobState::Running, JobState::Ended})
        if (name == to_string(state)) return state;
    throw StoreError("jobs.state: '" + std::string(name) + "' is no job state (placed, running, ended)");
}

const char* to_string(Durability d) { return d == Durability::Stored ? "stored" : "queued"; }

Store::Store(const std::string& path, bool synchronous_full, BacklogSettings backlog)
    : db_(std::make_unique<Database>(path)), backlog_(backlog) {
    db_->exec("PRAGMA journal_mode=WAL");
    // WAL with NORMAL survives a killed daemon; FULL also survives losing the host's power.
    db_->exec(synchronous_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
    db_->exec("PRAGMA foreign_keys=ON");
    // The pages a place or end touches stay in memory (SQLite's default is 2 MB); 64 MB.
    db_->exec("PRAGMA cache_size=-65536");
    // Each request's writes are a savepoint in its round's transaction: their undo records stay
    // in memory rather than in a temporary file created and removed per request.
    db_->exec("PRAGMA temp_store=MEMORY");
    migrate();
    st_ = std::make_unique<Statements>(db_->handle());
    Statement next(db_->handle(), sql::kNextDecision);
    next.step();
    next_decision_ = next.int64(0);
    checkpointer_ = std::make_unique<WalCheckpointer>(*db_, path, synchronous_full);
    if (synchronous_full) wal_sync_ = std::make_unique<WalSync>();
    open_journal();
}

Store::~Store() = default;

int Store::schema_version() {
    Statement s(db_->handle(), "PRAGMA user_version");
    s.step();
    return static_cast<int>(s.int64(0));
}

void Store::migrate() {
    int version = schema_version();
    const auto& steps = migrations();
    if (version > static_cast<int>(steps.size()))
        throw StoreError("database schema version " + std::to_string(version) + " is newer than this colocd (" +
                         std::to_string(steps.size()) + "); refusing to touch it");
    for (int v = version; v < static_cast<int>(steps.size()); ++v) {
        Transaction tx(*db_);
        db_->exec(steps[static_cast<std::size_t>(v)]);
        db_->exec("PRAGMA user_version = " + std::to_string(v + 1));
        tx.commit();
    }
}

void Store::record_placement(const JobRow& job, PlacementRow& placement, const std::vector<ColocationRow>& opened) {
    placement.decision = next_decision_++;
    write(PlacementWrite{job, placement, opened});
}

void Store::record_started(std::int64_t job_id, std::int64_t time) { write(StartedWrite{job_id, time}); }

void Store::record_slurm_times(std::int64_t job_id, std::int64_t submitted, std::optional<double> time_limit_s) {
    write(TimesWrite{job_id, submitted, time_limit_s});
}

void Store::record_moved(std::int64_t job_id, const std::string& node, const std::vector<int>& gpus) {
    write(MovedWrite{job_id, node, gpus});
}

void Store::record_ended(std::int64_t job_id, const std::string& node, std::int64_t time, int exit_status,
                         double elapsed_s, bool job_done) {
    write(EndedWrite{job_id, node, time, exit_status, elapsed_s, job_done});
}

void Store::record_closed_by_colocd(std::int64_t job_id, const std::string& node, std::int64_t time,
                                    std::optional<int> exit_status, bool job_done, const std::string& reason) {
    write(ClosedWrite{job_id, node, time, exit_status, job_done, reason});
}

void Store::record_steering_advice(std::int64_t decision, std::int64_t job_id, const std::string& node,
                                   const std::string& advice_json) {
    write(AdviceWrite{decision, job_id, node, advice_json});
}

void Store::save_model_params(const std::string& name, const std::string& json, std::int64_t time) {
    write(ParamsWrite{name, json, time});
}

void Store::record_observation(std::int64_t job_id, std::int64_t time, double iter_time_s,
                               const std::string& neighbours_json, const std::string& model_name,
                               const std::string& params_json) {
    write(ObservationWrite{job_id, time, iter_time_s, neighbours_json, model_name, params_json});
}

void Store::record_solo_run(const SoloRunWrite& run) { write(run); }

std::vector<SoloRunWrite> Store::solo_runs() {
    auto& s = st_->solo_runs.reset();
    std::vector<SoloRunWrite> out;
    while (s.step()) {
        SoloRunWrite r;
        r.key = s.text(0);
        r.learned = s.int64(1) != 0;
        r.job_id = s.int64(2);
        if (!s.is_null(3)) r.iter_time_s = s.real(3);
        if (!s.is_null(4)) r.runtime_s = s.real(4);
        r.time = s.int64(5);
        out.push_back(std::move(r));
    }
    return out;
}

void Store::apply(const StoreWrite& write) {
    if (const auto* w = std::get_if<PlacementWrite>(&write)) {
        const JobRow& job = w->job;
        const PlacementRow& placement = w->placement;
        Statement& upsert = st_->upsert_job.reset()
                                .bind(1, job.job_id)
                                .bind(2, job.uid)
                                .bind(3, job.user)
                                .bind(4, job.job_name)
                                .bind(5, job.partition)
                                .bind(6, job.profile)
                                .bind(7, job.first_seen)
                                .bind(8, std::string(to_string(job.state)));
        if (job.submitted) upsert.bind(9, *job.submitted);
        if (job.time_limit_s) upsert.bind(10, *job.time_limit_s);
        upsert.run();
        st_->insert_placement.reset()
            .bind(1, placement.job_id)
            .bind(2, placement.node)
            .bind(3, placement.mode)
            .bind(4, gpus_text(placement.gpus))
            .bind(5, placement.predicted_slowdown)
            .bind(6, placement.source)
            .bind(7, placement.created)
            .bind(8, placement.alternatives)
            .bind(9, placement.decision)
            .run();
        for (const auto& c : w->opened)
            st_->insert_colocation.reset()
                .bind(1, c.job_a)
                .bind(2, c.job_b)
                .bind(3, c.node)
                .bind(4, c.sharing)
                .bind(5, c.start)
                .run();
    } else if (const auto* m = std::get_if<MovedWrite>(&write)) {
        st_->move_placement.reset().bind(1, m->job_id).bind(2, m->node).bind(3, gpus_text(m->gpus)).run();
    } else if (const auto* s = std::get_if<StartedWrite>(&write)) {
        st_->mark_started.reset().bind(1, s->job_id).bind(2, s->time).run();
    } else if (const auto* t = std::get_if<TimesWrite>(&write)) {
        auto& u = st_->set_times.reset().bind(1, t->job_id).bind(2, t->submitted);
        if (t->time_limit_s) u.bind(3, *t->time_limit_s);
        u.run();
    } else if (const auto* e = std::get_if<EndedWrite>(&write)) {
        st_->close_placement.reset().bind(1, e->job_id).bind(2, e->node).bind(3, e->time).run();
        if (e->job_done)
            st_->end_job.reset()
                .bind(1, e->job_id)
                .bind(2, e->time)
                .bind(3, e->exit_status)
                .bind(4, e->elapsed_s)
                .run();
    } else if (const auto* c = std::get_if<ClosedWrite>(&write)) {
        st_->close_placement.reset().bind(1, c->job_id).bind(2, c->node).bind(3, c->time).run();
        if (c->job_done) {
            auto& s = st_->end_job_by_colocd.reset().bind(1, c->job_id).bind(2, c->time).bind(4, c->reason);
            if (c->exit_status) s.bind(3, *c->exit_status);
            s.run();
        }
    } else if (const auto* p = std::get_if<ParamsWrite>(&write)) {
        st_->save_params.reset().bind(1, p->name).bind(2, p->json).bind(3, p->time).run();
    } else if (const auto* o = std::get_if<ObservationWrite>(&write)) {
        st_->insert_observation.reset()
            .bind(1, o->job_id)
            .bind(2, o->time)
            .bind(3, o->iter_time_s)
            .bind(4, o->neighbours_json)
            .run();
        st_->save_params.reset().bind(1, o->model_name).bind(2, o->params_json).bind(3, o->time).run();
    } else if (const auto* a = std::get_if<AdviceWrite>(&write)) {
        st_->insert_advice.reset().bind(1, a->decision).bind(2, a->job_id).bind(3, a->node).bind(4, a->advice).run();
    } else if (const auto* r = std::get_if<SoloRunWrite>(&write)) {
        auto& u = st_->upsert_solo_run.reset()
                      .bind(1, r->key)
                      .bind(2, static_cast<std::int64_t>(r->learned))
                      .bind(3, r->job_id)
                      .bind(6, r->time);
        if (r->iter_time_s) u.bind(4, *r->iter_time_s);
        if (r->runtime_s) u.bind(5, *r->runtime_s);
        u.run();
    }
}

std::optional<JobRow> Store::job(std::int64_t job_id) {
    auto& s = st_->job.reset().bind(1, job_id);
    std::optional<JobRow> out;
    if (s.step()) out = read_job(s);
    s.reset();
    backlog_.overlay_job(job_id, out);
    return out;
}

std::vector<JobRow> Store::jobs(std::int64_t uid, int limit) {
    auto& s = uid < 0 ? st_->jobs_all.reset().bind(1, limit) : st_->jobs_of_uid.reset().bind(1, limit).bind(2, uid);
    std::vector<JobRow> out;
    while (s.step()) out.push_back(read_job(s));
    return out;
}

std::vector<PlacementRow> Store::placements_of(std::int64_t job_id) {
    auto& s = st_->placements_of.reset().bind(1, job_id);
    std::vector<PlacementRow> out;
    while (s.step()) out.push_back(read_placement(s));
    backlog_.overlay_placements(job_id, out);
    return out;
}

std::vector<PlacementRow> Store::open_placements() {
    auto& s = st_->open_placements.reset();
    std::vector<PlacementRow> out;
    while (s.step()) out.push_back(read_placement(s));
    backlog_.overlay_open_placements(out);
    return out;
}

std::vector<ColocationRow> Store::colocations_of(std::int64_t job_id) {
    auto& s = st_->colocations_of.reset().bind(1, job_id);
    std::vector<ColocationRow> out;
    while (s.step()) {
        ColocationRow c;
        c.job_a = s.int64(0);
        c.job_b = s.int64(1);
        c.node = s.text(2);
        c.sharing = s.text(3);
        c.start = s.int64(4);
        if (!s.is_null(5)) c.end = s.int64(5);
        out.push_back(std::move(c));
    }
    return out;
}

std::int64_t Store::count_jobs() {
    auto& s = st_->count_jobs.reset();
    s.step();
    std::int64_t n = s.int64(0);
    s.reset();
    return n;
}

std::int64_t Store::count_observations() {
    auto& s = st_->count_observations.reset();
    s.step();
    std::int64_t n = s.int64(0);
    s.reset();
    return n;
}

std::optional<double> Store::last_iter_time(std::int64_t job_id) {
    auto& s = st_->last_observation.reset().bind(1, job_id);
    std::optional<double> out;
    if (s.step()) out = s.real(0);
    s.reset();
    return out;
}

std::optional<double> Store::mean_speed(std::int64_t job_id, double solo_iter_s) {
    auto& s = st_->mean_speed.reset().bind(1, job_id).bind(2, solo_iter_s);
    std::optional<double> out;
    if (s.step() && !s.is_null(0)) out = s.real(0);
    s.reset();
    return out;
}

std::vector<ObservationRow> Store::observations_of(std::int64_t job_id) {
    auto& s = st_->observations_of.reset().bind(1, job_id);
    std::vector<ObservationRow> out;
    while (s.step()) out.push_back({s.int64(0), s.real(1), s.text(2)});
    s.reset();
    return out;
}

std::optional<std::string> Store::load_model_params(const std::string& name) {
    auto& s = st_->load_params.reset().bind(1, name);
    std::optional<std::string> out;
    if (s.step()) out = s.text(0);
    s.reset();
    backlog_.overlay_params(name, out);
    return out;
}

std::optional<std::string> Store::steering_advice(std::int64_t decision) {
    auto& s = st_->select_advice.reset().bind(1, decision);
    std::optional<std::string> out;
    if (s.step()) out = s.text(0);
    s.reset();
    backlog_.overlay_advice(decision, out);
    return out;
}

// The journal's number of the last record stored (daemon/store/durability.cpp).
std::uint64_t Store::applied_seq() {
    Statement& q = st_->applied_seq.reset();
    const std::uint64_t seq = q.step() ? static_cast<std::uint64_t>(q.int64(0)) : 0;
    q.reset();  // no read transaction left open on the connection
    return seq;
}

void Store::mark_applied(std::uint64_t seq) {
    st_->set_applied_seq.reset().bind(1, static_cast<std::int64_t>(seq)).run();
}

}  // namespace coloc::daemon
