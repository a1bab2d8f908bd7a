// The backlog's journal: what colocd acknowledged while the database could not be written is
// in the journal, on disk, and is stored at the next start, once, however often it is replayed.
// The database's trouble is real (query_only: SQLITE_READONLY); a killed colocd is a Store that
// goes away without storing its backlog; the outcome is read from another connection.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "daemon/log.hpp"
#include "daemon/store/journal.hpp"
#include "daemon/store/store.hpp"
#include "daemon/store/write_codec.hpp"
#include "tests/unit/test_env.hpp"

using namespace coloc::daemon;

namespace {

const bool quiet = (set_log_level(LogLevel::Error), true);

BacklogSettings journalled(const std::string& db, std::uint64_t reserve = 1 << 20) {
    BacklogSettings s;
    s.journal_path = db + ".backlog";
    s.journal_reserve_bytes = reserve;
    return s;
}

JobRow job_row(std::int64_t id) {
    JobRow j;
    j.job_id = id;
    j.uid = 1000;
    j.user = "u";
    j.first_seen = 1000;
    return j;
}

PlacementRow placement_row(std::int64_t id) {
    PlacementRow p;
    p.job_id = id;
    p.node = "n1";
    p.mode = "bind";
    p.gpus = {static_cast<int>(id % 4)};
    p.created = 1000 + id;
    return p;
}

std::int64_t count(const std::string& db, const std::string& table) {
    Database other(db);
    Statement q(other.handle(), "SELECT count(*) FROM " + table);
    q.step();
    return q.int64(0);
}

// Places, starts and observes jobs [from, to) while the database is read-only; returns their decisions.
std::vector<std::int64_t> queue_jobs(Store& s, std::int64_t from, std::int64_t to) {
    std::vector<std::int64_t> decisions;
    for (std::int64_t id = from; id < to; ++id) {
        PlacementRow p = placement_row(id);
        s.record_placement(job_row(id), p, {});
        s.record_started(id, 1100);
        s.record_observation(id, 1200, 0.25, "[]", "coloc", "{}");
        decisions.push_back(p.decision);
    }
    return decisions;
}

}  // namespace

TEST_CASE("journal: records read back in order; a torn tail and stale records after a clear end them") {
    const std::string path = coloc::test::scratch("records.backlog");
    {
        Journal j(path, 1 << 16);
        CHECK(j.found().empty());
        for (std::uint64_t seq = 1; seq <= 3; ++seq) j.append(seq, "record-" + std::to_string(seq));
        j.sync();
        CHECK(std::filesystem::file_size(path) == (1u << 16));  // the reserve is allocated
    }
    {
        Journal j(path, 1 << 16);
        REQUIRE(j.found().size() == 3);
        CHECK(j.found()[2].seq == 3);
        CHECK(j.found()[2].payload == "record-3");
        j.clear();
        j.append(4, "record-4");  // as long as record 1: record 2 follows it, stale
        j.sync();
    }
    {
        Journal j(path, 1 << 16);
        REQUIRE(j.found().size() == 1);
        CHECK(j.found()[0].seq == 4);
        j.append(5, "record-5");
        j.sync();
    }
    {
        // A byte of the last record's payload torn: the records before it stand.
        std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(static_cast<std::streamoff>(2 * Journal::kHeaderBytes + 8 + 3));
        f.put('X');
    }
    Journal j(path, 1 << 16);
    REQUIRE(j.found().size() == 1);
    CHECK(j.found()[0].payload == "record-4");
}

TEST_CASE("journal: a full reserve refuses an append naming the file; rewind drops what followed a mark") {
    const std::string path = coloc::test::scratch("small.backlog");
    Journal j(path, 4096);
    const std::string payload(1000, 'p');
    j.append(1, payload);
    const std::uint64_t mark = j.mark();
    j.append(2, payload);
    j.rewind(mark);
    j.append(2, payload);
    j.append(3, payload);
    try {
        for (std::uint64_t seq = 4; seq < 10; ++seq) j.append(seq, payload);
        FAIL("a 4 KiB journal took more than 4 KiB");
    } catch (const JournalError& e) {
        CHECK(std::string(e.what()).find(path) != std::string::npos);
        CHECK(std::string(e.what()).find("full") != std::string::npos);
    }
    j.sync();
    Journal again(path, 4096);
    CHECK(again.found().size() == 3);
}

TEST_CASE("journal: every kind of history write is read back as it was written") {
    PlacementRow p = placement_row(7);
    p.decision = 42;
    p.ended = 1300;
    JobRow jr = job_row(7);
    jr.exit_status = 3;
    jr.state = JobState::Running;
    const std::vector<StoreWrite> writes = {
        PlacementWrite{jr, p, {ColocationRow{7, 8, "n1", "gpu", 1000, std::nullopt}}},
        StartedWrite{7, 1100},
        EndedWrite{7, "n1", 1300, 1, 12.5, false},
        ClosedWrite{7, "n1", 1300, std::nullopt, true, "gone from Slurm"},
        ParamsWrite{"coloc", R"({"a":1})", 1400},
        ObservationWrite{7, 1200, 0.25, "[8]", "coloc", "{}"},
        AdviceWrite{42, 7, "n1", R"({"weight":3})"},
        SoloRunWrite{"resnet50", true, 7, 1500, 0.5, std::nullopt},
        MovedWrite{7, "n1", {2, 3}},
        TimesWrite{7, 900, 3600.0},
    };
    for (const StoreWrite& w : writes) {
        const std::string text = encode_write(w);
        const StoreWrite back = decode_write(text);
        CHECK(back.index() == w.index());
        CHECK(encode_write(back) == text);
    }
    const auto* back = std::get_if<PlacementWrite>(&writes[0]);
    const PlacementWrite decoded = std::get<PlacementWrite>(decode_write(encode_write(writes[0])));
    CHECK(decoded.placement.decision == 42);
    CHECK(decoded.placement.gpus == back->placement.gpus);
    CHECK(decoded.job.exit_status == 3);
    CHECK(decoded.job.state == JobState::Running);
    CHECK(decoded.opened.at(0).end == std::nullopt);
    CHECK_THROWS_WITH_AS(decode_write(R"({"kind":"vanished","write":{}})"), doctest::Contains("vanished"), StoreError);
    CHECK_THROWS_AS(decode_write("{not json"), StoreError);
}

TEST_CASE("journal: what a killed colocd acknowledged while the database was read-only is stored at the next start") {
    const std::string db = coloc::test::scratch("killed.db");
    std::vector<std::int64_t> decisions;
    {
        Store s(db, false, journalled(db));
        decisions = queue_jobs(s, 1, 2);  // stored
        s.db().exec("PRAGMA query_only = 1");
        const auto queued = queue_jobs(s, 2, 6);
        decisions.insert(decisions.end(), queued.begin(), queued.end());
        REQUIRE_FALSE(s.backlog().writable());
        CHECK(s.backlog().size() == 12);
        CHECK(s.journal()->used() > 0);
    }  // killed: the backlog in memory is gone
    CHECK(count(db, "placements") == 1);
    {
        Store s(db, false, journalled(db));
        CHECK(s.backlog().writable());
        CHECK(s.backlog().empty());
        CHECK(s.journal()->used() == 0);  // stored, so cleared
        for (std::int64_t id = 1; id < 6; ++id) {
            auto row = s.job(id);
            REQUIRE(row.has_value());
            CHECK(row->state == JobState::Running);
            CHECK(s.placements_of(id).at(0).decision == decisions[static_cast<std::size_t>(id - 1)]);
        }
        // A later decision is numbered after those replayed.
        PlacementRow p = placement_row(9);
        s.record_placement(job_row(9), p, {});
        CHECK(p.decision == decisions.back() + 1);
    }
    CHECK(count(db, "placements") == 6);
    CHECK(count(db, "observations") == 5);
}

TEST_CASE("journal: records replayed again after they were stored are not stored twice") {
    const std::string db = coloc::test::scratch("twice.db");
    const std::string saved = db + ".saved";
    {
        Store s(db, false, journalled(db));
        s.db().exec("PRAGMA query_only = 1");
        queue_jobs(s, 1, 4);
        // The journal as it was before the database took the records: a colocd killed between
        // storing them and clearing the journal leaves this behind.
        std::filesystem::copy_file(db + ".backlog", saved);
        s.db().exec("PRAGMA query_only = 0");
        CHECK(s.retry_backlog_now() == 9);
    }
    std::filesystem::copy_file(saved, db + ".backlog", std::filesystem::copy_options::overwrite_existing);
    {
        Store s(db, false, journalled(db));
        CHECK(s.backlog().empty());
        CHECK(s.journal()->used() == 0);
    }
    CHECK(count(db, "placements") == 3);
    CHECK(count(db, "observations") == 3);
}

TEST_CASE("journal: a start while the database is still locked keeps the records queued and journalled") {
    const std::string db = coloc::test::scratch("still.db");
    {
        Store s(db, false, journalled(db));
        s.db().exec("PRAGMA query_only = 1");
        queue_jobs(s, 1, 3);
    }
    {
        // Another writer holds the database (SQLITE_BUSY) through the next start.
        Database other(db);
        other.exec("BEGIN EXCLUSIVE");
        Store s(db, false, journalled(db));
        CHECK_FALSE(s.backlog().writable());
        CHECK(s.backlog().size() == 6);
        CHECK(s.journal()->found().size() == 6);
        other.exec("ROLLBACK");
    }
    {
        Store s(db, false, journalled(db));
        CHECK(s.backlog().empty());
    }
    CHECK(count(db, "placements") == 2);
    CHECK(count(db, "observations") == 2);
}

TEST_CASE("journal: an abandoned round's queued writes are taken back, and a full journal refuses a new unit") {
    const std::string db = coloc::test::scratch("round.db");
    {
        Store s(db, false, journalled(db, 128 << 10));
        s.db().exec("PRAGMA query_only = 1");
        queue_jobs(s, 1, 2);
        const std::uint64_t used = s.journal()->used();
        s.begin_round();
        s.begin_unit();
        queue_jobs(s, 2, 3);
        s.abandon_round();  // refused: none of it was acknowledged
        CHECK(s.backlog().size() == 3);
        CHECK(s.journal()->used() == used);
        s.begin_round();
        s.begin_unit();
        queue_jobs(s, 3, 4);
        CHECK(s.finish_round() == Durability::Queued);
        CHECK(s.backlog().size() == 6);
        // Fill the journal: a unit that may not fit is refused before it writes anything.
        std::int64_t id = 10;
        bool refused = false;
        while (!refused && id < 10000) {
            s.begin_unit();
            try {
                s.save_model_params("coloc", std::string(4000, 'x'), id++);
            } catch (const BacklogFull& e) {
                refused = true;
                CHECK(std::string(e.what()).find("full") != std::string::npos);
            }
        }
        CHECK(refused);
    }
    Store s(db, false, journalled(db, 128 << 10));
    CHECK(s.backlog().empty());
    CHECK(count(db, "placements") == 2);  // jobs 1 and 3; job 2's round was abandoned
    CHECK_FALSE(s.job(2).has_value());
}
