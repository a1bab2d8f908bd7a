// Database trouble: when colocd's SQLite history cannot be written (disk full, locked, read-only)
// colocd goes on placing from memory, queues the writes in a bounded backlog, says "queued" in
// its replies, shows the backlog in status, and stores every queued record, in order, once it
// can. The trouble is real: SQLite's own page limit (SQLITE_FULL), a second connection's lock
// (SQLITE_BUSY), query_only (SQLITE_READONLY), a disk that fails writes or syncs
// (tests/support/fault_vfs.hpp); the outcome is checked from another connection.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "daemon/log.hpp"
#include "daemon/service/service.hpp"
#include "daemon/store/sqlite.hpp"
#include "daemon/store/store.hpp"
#include "daemon/store/wal_sync.hpp"
#include "proto/envelope.hpp"
#include "proto/messages.hpp"
#include "tests/support/fault_vfs.hpp"
#include "tests/unit/test_env.hpp"

using namespace coloc;
using namespace coloc::daemon;
using proto::json;

namespace {

const bool quiet = (set_log_level(LogLevel::Error), true);

Config trouble_config(const std::string& db, std::size_t backlog_max = 100000) {
    Config c = parse_config(R"(listen: [ "ipc:///tmp/unused.sock" ]
default_mode: bind
node_types:
  quad: { gpus: 4, slots_per_gpu: 64 }
nodes:
  - { names: "n[1-2]", type: quad, link: leaf1 }
)",
                            "test.yaml");
    c.database = db;
    c.munge_socket = test::munge_socket();
    c.database_backlog_max = backlog_max;
    return c;
}

json call(Service& s, json body) {
    return json::parse(s.handle(proto::seal_request(std::move(body), test::munge_socket())));
}

json place_job(Service& s, std::int64_t job) {
    proto::PlaceRequest r;
    r.job_id = job;
    r.job_uid = 1000;
    r.node = "n1";
    r.slots = 1;
    return call(s, r.to_json());
}

json ended(Service& s, std::int64_t job) {
    proto::EndedReport r;
    r.job_id = job;
    r.node = "n1";
    r.time = 2000;
    return call(s, r.to_json());
}

json status(Service& s) { return call(s, {{"op", "status"}})["status"]; }

// Each placement's (job, decision) in the order the database numbered them, from another connection.
std::vector<std::pair<std::int64_t, std::int64_t>> stored_placements(const std::string& db) {
    Database other(db);
    Statement q(other.handle(), "SELECT job_id, decision FROM placements ORDER BY decision");
    std::vector<std::pair<std::int64_t, std::int64_t>> out;
    while (q.step()) out.emplace_back(q.int64(0), q.int64(1));
    return out;
}

std::string job_state(const std::string& db, std::int64_t job) {
    auto row = Store(db).job(job);
    return row ? to_string(row->state) : "absent";
}

// Retries as colocd's loop does (the group-commit part's periodic work), until the backlog is stored.
bool drained_within(Service& s, std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        s.commits().run_due(0);
        if (s.commits().backlog().writable()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
}

}  // namespace

TEST_CASE("db trouble: disk full (SQLITE_FULL): colocd places from memory, queues, and stores it all later in order") {
    const std::string db = test::scratch("full.db");
    Service s(trouble_config(db));
    json first = place_job(s, 1);
    REQUIRE(first["ok"] == true);
    CHECK(first["durability"] == "stored");

    // The database may not grow by a page more: the next insert that needs a page fails.
    Database& conn = s.commits().database();
    Statement pages(conn.handle(), "PRAGMA page_count");
    REQUIRE(pages.step());
    conn.exec("PRAGMA max_page_count = " + std::to_string(pages.int64(0)));

    std::int64_t job = 2;
    json r;
    for (; job < 200; ++job) {
        r = place_job(s, job);
        REQUIRE(r["ok"] == true);
        if (r["durability"] == "queued") break;
        CHECK(r["durability"] == "stored");
    }
    REQUIRE(r["durability"] == "queued");
    const std::int64_t first_queued = job;
    CHECK(s.commits().backlog().state().rfind("unwritable since ", 0) == 0);

    // Still placing, still remembering its own decisions while they are only in memory.
    json more = place_job(s, job + 1);
    CHECK(more["ok"] == true);
    CHECK(more["durability"] == "queued");
    json again = place_job(s, job + 1);
    CHECK(again["reused"] == true);
    CHECK(again["decision"] == more["decision"]);
    CHECK_FALSE(again.contains("durability"));  // nothing written
    json end = ended(s, job + 1);
    CHECK(end["ok"] == true);
    CHECK(end["known"] == true);
    CHECK(end["durability"] == "queued");
    CHECK(s.cluster().find(static_cast<place::JobId>(first_queued)) != nullptr);
    CHECK(s.cluster().find(static_cast<place::JobId>(job + 1)) == nullptr);

    json st = status(s);
    CHECK(st["database_backlog"].get<std::int64_t>() >= 3);  // two placements and an end at least
    CHECK(st["database_state"].get<std::string>().rfind("unwritable since ", 0) == 0);
    CHECK(st["database_last_error"].get<std::string>().find("full") != std::string::npos);
    CHECK(st["database_write_failures"].get<std::int64_t>() >= 1);
    CHECK_FALSE(Store(db).job(job + 1).has_value());  // not stored yet

    conn.exec("PRAGMA max_page_count = 1073741823");
    REQUIRE(drained_within(s, std::chrono::seconds(10)));
    st = status(s);
    CHECK(st["database_state"] == "writable");
    CHECK(st["database_backlog"] == 0);
    CHECK(st["database_written_late"].get<std::int64_t>() >= 3);

    // Every job placed, each once, numbered in the order they were placed; the end stored after.
    auto rows = stored_placements(db);
    REQUIRE(rows.size() == static_cast<std::size_t>(job + 1));
    for (std::size_t i = 0; i < rows.size(); ++i) CHECK(rows[i].first == static_cast<std::int64_t>(i + 1));
    CHECK(rows.back().second == more["decision"].get<std::int64_t>());
    CHECK(job_state(db, job + 1) == "ended");
    CHECK(job_state(db, first_queued) == "placed");
    CHECK(place_job(s, job + 2)["durability"] == "stored");
}

TEST_CASE("db trouble: locked by another process (SQLITE_BUSY): queued until the lock goes, then stored") {
    const std::string db = test::scratch("locked.db");
    Service s(trouble_config(db));
    REQUIRE(place_job(s, 1)["durability"] == "stored");
    Database other(db);
    other.exec("BEGIN EXCLUSIVE");
    json r = place_job(s, 2);  // waits out the busy timeout once, then queues
    CHECK(r["ok"] == true);
    CHECK(r["durability"] == "queued");
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(place_job(s, 3)["durability"] == "queued");
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(500));  // no second wait
    CHECK(status(s)["database_last_error"].get<std::string>().find("locked") != std::string::npos);
    s.commits().run_due(0);  // not due yet, or still locked: nothing lost either way
    CHECK(s.commits().backlog().size() == 2);

    other.exec("COMMIT");
    REQUIRE(drained_within(s, std::chrono::seconds(10)));
    auto rows = stored_placements(db);
    REQUIRE(rows.size() == 3);
    CHECK(rows[1].first == 2);
    CHECK(rows[2].first == 3);
}

TEST_CASE("db trouble: read-only (SQLITE_READONLY through query_only) takes the same path") {
    const std::string db = test::scratch("readonly.db");
    Service s(trouble_config(db));
    s.commits().database().exec("PRAGMA query_only = 1");
    json r = place_job(s, 7);
    CHECK(r["ok"] == true);
    CHECK(r["durability"] == "queued");
    CHECK(status(s)["database_last_error"].get<std::string>().find("readonly") != std::string::npos);
    s.commits().database().exec("PRAGMA query_only = 0");
    CHECK(s.commits().retry_now() == 1);
    CHECK(job_state(db, 7) == "placed");
}

TEST_CASE("db trouble: a full backlog refuses new writes as unavailable and keeps every queued record") {
    const std::string db = test::scratch("bounded.db");
    Service s(trouble_config(db, 3));
    Database other(db);
    other.exec("BEGIN EXCLUSIVE");
    for (std::int64_t job = 1; job <= 3; ++job) REQUIRE(place_job(s, job)["durability"] == "queued");
    json refused = place_job(s, 4);
    CHECK(refused["ok"] == false);
    CHECK(refused["error"]["code"] == "unavailable");
    const std::string why = refused["error"]["message"];
    CHECK(why.find("unwritable since") != std::string::npos);
    CHECK(why.find("backlog full (3 of 3 records)") != std::string::npos);
    CHECK(s.cluster().find(4) == nullptr);  // refused means not placed
    CHECK(ended(s, 1)["error"]["code"] == "unavailable");
    CHECK(place_job(s, 2)["reused"] == true);  // writing nothing, it is still answered
    CHECK(s.commits().backlog().size() == 3);

    other.exec("COMMIT");
    REQUIRE(s.commits().retry_now() == 3);
    auto rows = stored_placements(db);
    REQUIRE(rows.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) CHECK(rows[i].first == static_cast<std::int64_t>(i + 1));
    CHECK(place_job(s, 4)["durability"] == "stored");
}

TEST_CASE("db trouble: a round that hits the trouble midway queues all of its writes, earlier ones first") {
    const std::string db = test::scratch("midway.db");
    Service s(trouble_config(db));
    Database& conn = s.commits().database();
    Statement pages(conn.handle(), "PRAGMA page_count");
    REQUIRE(pages.step());
    conn.exec("PRAGMA max_page_count = " + std::to_string(pages.int64(0)));
    std::vector<std::string> wires;
    for (std::int64_t job = 1; job <= 60; ++job) {
        proto::PlaceRequest r;
        r.job_id = job;
        r.job_uid = 1000;
        r.node = "n1";
        r.slots = 1;
        wires.push_back(proto::seal_request(r.to_json(), test::munge_socket()));
    }
    std::vector<std::string_view> views(wires.begin(), wires.end());
    const auto replies = s.handle_round(views);
    for (const auto& text : replies) {
        json r = json::parse(text);
        CHECK(r["ok"] == true);
        CHECK(r["durability"] == "queued");  // the round's commit is all or nothing
    }
    CHECK(s.commits().backlog().size() == 60);
    conn.exec("PRAGMA max_page_count = 1073741823");
    CHECK(s.commits().retry_now() == 60);
    auto rows = stored_placements(db);
    REQUIRE(rows.size() == 60);
    for (std::size_t i = 0; i < rows.size(); ++i) CHECK(rows[i].first == static_cast<std::int64_t>(i + 1));
}

TEST_CASE("db trouble: a stop with a backlog tries once more and says what is lost") {
    const std::string db = test::scratch("stop.db");
    Service s(trouble_config(db));
    Database other(db);
    other.exec("BEGIN EXCLUSIVE");
    REQUIRE(place_job(s, 1)["durability"] == "queued");
    REQUIRE(place_job(s, 2)["durability"] == "queued");
    CHECK(s.store_before_stop() == 2);  // still locked: two records lost
    other.exec("COMMIT");
    CHECK(s.store_before_stop() == 0);  // a later try stores them
    CHECK(stored_placements(db).size() == 2);
}

TEST_CASE("db trouble: colocd.yaml's backlog, journal, sync and retry keys are checked") {
    auto parse = [](const std::string& extra) {
        return parse_config("listen: [ \"ipc:///tmp/x.sock\" ]\n" + extra +
                                "node_types:\n  quad: { gpus: 4 }\nnodes:\n  - { names: n1, type: quad }\n",
                            "t.yaml");
    };
    Config d = parse("");
    CHECK(d.database_backlog_max == 100000);
    CHECK(d.database_retry_s == 1);
    CHECK(d.database_retry_max_s == 30);
    Config c = parse("database_backlog_max: 5\ndatabase_retry_s: 2\ndatabase_retry_max_s: 60\n");
    CHECK(c.database_backlog_max == 5);
    CHECK(c.database_retry_s == 2);
    CHECK(c.database_retry_max_s == 60);
    CHECK_THROWS_WITH_AS(parse("database_backlog_max: 0\n"),
                         doctest::Contains("key 'database_backlog_max': 0 is outside 1..10000000"), ConfigError);
    CHECK_THROWS_WITH_AS(parse("database_retry_s: 10\ndatabase_retry_max_s: 5\n"),
                         doctest::Contains("key 'database_retry_max_s': 5 is less than database_retry_s (10)"),
                         ConfigError);
    // The journal beside the database unless named; commits synced unless told otherwise.
    CHECK(d.database_sync_full);
    CHECK(database_journal_path(d) == d.database + ".backlog");
    CHECK(d.database_journal_reserve_mb == 64);
    Config j = parse("database_sync: normal\ndatabase_journal: /spare/coloc.backlog\ndatabase_journal_reserve_mb: 8\n");
    CHECK_FALSE(j.database_sync_full);
    CHECK(database_journal_path(j) == "/spare/coloc.backlog");
    CHECK(j.database_journal_reserve_mb == 8);
    CHECK_THROWS_WITH_AS(parse("database_sync: sometimes\n"),
                         doctest::Contains("key 'database_sync': 'sometimes' is not one of full, normal"), ConfigError);
    CHECK_THROWS_WITH_AS(parse("database_journal_reserve_mb: 0\n"),
                         doctest::Contains("key 'database_journal_reserve_mb': 0 is outside 1..65536"), ConfigError);
}

TEST_CASE("db trouble: I/O errors on the database's writes (EIO): queued and journalled, stored once the disk heals") {
    test::FaultyDisk disk;
    const std::string db = test::scratch("eio.db");
    Service s(trouble_config(db));
    REQUIRE(place_job(s, 1)["durability"] == "stored");
    disk.fail_writes(db);  // the database and its WAL; the journal is written without SQLite
    json r = place_job(s, 2);
    CHECK(r["ok"] == true);
    CHECK(r["durability"] == "queued");
    CHECK(ended(s, 2)["durability"] == "queued");
    CHECK(disk.faults() > 0);
    json st = status(s);
    CHECK(st["database_last_error"].get<std::string>().find("I/O") != std::string::npos);
    CHECK(st["database_journal"] == db + ".backlog");
    CHECK(st["database_journal_error"] == "");
    CHECK(st["database_journal_used"].get<std::int64_t>() > 0);
    disk.clear();
    REQUIRE(drained_within(s, std::chrono::seconds(10)));
    CHECK(status(s)["database_journal_used"] == 0);
    CHECK(stored_placements(db).size() == 2);
    CHECK(job_state(db, 2) == "ended");
}

TEST_CASE(
    "db trouble: a failing fsync (database_sync: full) acknowledges nothing unsynced; later writes are queued, "
    "journalled, stored once it syncs") {
    test::FaultyDisk disk;
    const std::string db = test::scratch("fsync-full.db");
    Service s(trouble_config(db));
    REQUIRE(place_job(s, 1)["durability"] == "stored");
    disk.fail_syncs(db);
    // The round's commit is written but its sync (off the request thread) failed: not acknowledged.
    json r = place_job(s, 2);
    CHECK(r["ok"] == false);
    CHECK(r["error"]["code"] == "internal");
    CHECK(r["error"]["message"].get<std::string>().find("cannot sync") != std::string::npos);
    CHECK(disk.faults() > 0);
    // Nothing more is trusted to the WAL until a checkpoint has made it whole on disk.
    CHECK(place_job(s, 3)["durability"] == "queued");
    CHECK(status(s)["database_journal_used"].get<std::int64_t>() > 0);
    CHECK_FALSE(drained_within(s, std::chrono::seconds(2)));  // the checkpoint's sync fails too
    disk.clear();
    REQUIRE(drained_within(s, std::chrono::seconds(10)));
    CHECK(status(s)["database_journal_used"] == 0);
    CHECK(place_job(s, 4)["durability"] == "stored");
    CHECK(stored_placements(db).size() == 4);  // job 2's commit, unacknowledged, is kept as written
}

TEST_CASE("db trouble: a failing fsync (database_sync: normal) fails the checkpoint, not the requests; none lost") {
    test::FaultyDisk disk;
    const std::string db = test::scratch("fsync.db");
    Config cfg = trouble_config(db);
    cfg.database_sync_full = false;
    Service s(cfg);
    disk.fail_syncs(db);
    for (std::int64_t job = 1; job <= 20; ++job) CHECK(place_job(s, job)["durability"] == "stored");
    // The checkpoint syncs the WAL before it copies it into the database: it fails.
    sqlite3* conn = s.commits().database().handle();
    CHECK(sqlite3_wal_checkpoint_v2(conn, nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr) != SQLITE_OK);
    CHECK(disk.faults() > 0);
    CHECK(place_job(s, 21)["durability"] == "stored");
    disk.clear();
    CHECK(sqlite3_wal_checkpoint_v2(conn, nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr) == SQLITE_OK);
    CHECK(stored_placements(db).size() == 21);
}

TEST_CASE("db trouble: a round's sync that failed before its replies asked is still their ticket (no lost failure)") {
    // The race the sanitized build showed: the sync thread settles the round's ticket as failed
    // before the request thread asks which ticket the round's replies wait for.
    test::FaultyDisk disk;
    const std::string db = test::scratch("fsync-race.db");
    Store s(db, true);
    disk.fail_syncs(db);
    s.begin_round();
    s.begin_unit();
    JobRow j;
    j.job_id = 1;
    j.uid = 1000;
    j.user = "u";
    j.first_seen = 1000;
    PlacementRow p;
    p.job_id = 1;
    p.node = "n1";
    p.mode = "bind";
    p.gpus = {0};
    p.created = 1001;
    s.record_placement(j, p, {});
    REQUIRE(s.finish_round() == Durability::Stored);  // committed; "stored" once synced
    WalSync* sync = s.wal_sync();
    REQUIRE(sync != nullptr);
    REQUIRE(sync->wait(sync->latest()) == WalSync::Outcome::Failed);  // settled before it is asked
    const std::uint64_t ticket = s.sync_ticket();
    CHECK(ticket == sync->latest());
    CHECK(sync->outcome(ticket) == WalSync::Outcome::Failed);
}
