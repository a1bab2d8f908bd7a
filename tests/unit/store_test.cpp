#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "daemon/store/store.hpp"
#include "tests/unit/test_env.hpp"

using namespace coloc::daemon;

namespace {

JobRow job(std::int64_t id, std::int64_t uid) {
    JobRow j;
    j.job_id = id;
    j.uid = uid;
    j.user = "u" + std::to_string(uid);
    j.job_name = "train";
    j.partition = "bind";
    j.profile = "resnet50";
    j.first_seen = 1000;
    return j;
}

PlacementRow placement(std::int64_t id, const std::string& node, std::vector<int> gpus) {
    PlacementRow p;
    p.job_id = id;
    p.node = node;
    p.mode = "bind";
    p.gpus = std::move(gpus);
    p.predicted_slowdown = 1.2;
    p.created = 1000;
    p.alternatives = R"([{"loss":0.1}])";
    return p;
}

}  // namespace

TEST_CASE("store: placements, starts, ends and co-location intervals round trip") {
    std::string path = coloc::test::scratch("store.db");
    {
        Store s(path);
        CHECK(s.schema_version() == kSchemaVersion);
        PlacementRow a = placement(10, "n1", {0, 1});
        s.record_placement(job(10, 1000), a, {});
        CHECK(a.decision > 0);
        PlacementRow b = placement(11, "n1", {1});
        s.record_placement(job(11, 1001), b, {{11, 10, "n1", "gpu", 1005, std::nullopt}});
        CHECK(b.decision > a.decision);
        s.record_started(10, 1001);
        s.record_ended(10, "n1", 1100, 0, 99.5, true);
    }
    Store s(path);  // reopened: everything committed is there
    auto j = s.job(10);
    REQUIRE(j);
    CHECK(j->state == JobState::Ended);
    CHECK(*j->start == 1001);
    CHECK(*j->end == 1100);
    CHECK(*j->exit_status == 0);
    CHECK(*j->elapsed_s == doctest::Approx(99.5));
    CHECK(j->profile == "resnet50");
    auto ps = s.placements_of(10);
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].gpus == std::vector<int>{0, 1});
    CHECK(ps[0].ended.value_or(0) == 1100);
    CHECK(ps[0].alternatives == R"([{"loss":0.1}])");
    auto open = s.open_placements();
    REQUIRE(open.size() == 1);
    CHECK(open[0].job_id == 11);
    auto cs = s.colocations_of(10);
    REQUIRE(cs.size() == 1);
    CHECK(cs[0].sharing == "gpu");
    CHECK(cs[0].end.value_or(0) == 1100);  // closed when job 10 ended on n1
    CHECK(s.jobs(1001, 10).size() == 1);
    CHECK(s.jobs(-1, 10).size() == 2);
    CHECK(s.count_jobs() == 2);
}

TEST_CASE("store: Slurm's submit time and time limit are kept with the job; a second placement keeps the first's") {
    Store s(coloc::test::scratch("store.db"));
    JobRow with = job(20, 1000);
    with.submitted = 900;
    with.time_limit_s = 3600;
    PlacementRow a = placement(20, "n1", {0});
    s.record_placement(with, a, {});
    JobRow later = job(20, 1000);  // its second node's placement, Slurm's queue no longer holding it
    PlacementRow b = placement(20, "n2", {0});
    s.record_placement(later, b, {});
    PlacementRow c = placement(21, "n1", {1});
    s.record_placement(job(21, 1000), c, {});
    const auto j20 = s.job(20), j21 = s.job(21);
    REQUIRE(j20);
    REQUIRE(j21);
    CHECK(j20->submitted.value_or(0) == 900);
    CHECK(j20->time_limit_s.value_or(0) == 3600);
    CHECK_FALSE(j21->submitted);
    CHECK_FALSE(j21->time_limit_s);
    // Read from Slurm's queue after the launch: filled in where missing, never replacing.
    s.record_slurm_times(21, 950, 600.0);
    s.record_slurm_times(20, 100, 60.0);
    CHECK(s.job(21)->submitted.value_or(0) == 950);
    CHECK(s.job(21)->time_limit_s.value_or(0) == 600);
    CHECK(s.job(20)->submitted.value_or(0) == 900);
    CHECK(s.job(20)->time_limit_s.value_or(0) == 3600);
}

TEST_CASE("store: a job's pairs, and each ends when the first of the two ends on the pair's node") {
    Store s(coloc::test::scratch("pairs.db"));
    PlacementRow p1 = placement(1, "n1", {0}), p2 = placement(2, "n1", {0});
    PlacementRow p3 = placement(3, "n2", {0}), p4 = placement(4, "n2", {0});
    s.record_placement(job(1, 1), p1, {});
    s.record_placement(job(2, 1), p2, {{2, 1, "n1", "gpu", 1000, std::nullopt}});
    s.record_placement(job(3, 1), p3, {});
    s.record_placement(job(4, 1), p4, {{4, 3, "n2", "node", 1000, std::nullopt}});  // not job 1's
    auto open = s.colocations_of(1);
    REQUIRE(open.size() == 1);
    CHECK(open[0].job_a == 2);
    CHECK_FALSE(open[0].end);

    s.record_ended(2, "n1", 1200, 0, 200, true);
    PlacementRow p5 = placement(5, "n1", {1});
    p5.created = 1250;
    s.record_placement(job(5, 1), p5, {{5, 1, "n1", "node", 1250, std::nullopt}});
    s.record_ended(1, "n1", 1300, 0, 300, true);  // after job 2 had gone: that pair ended at 1200
    auto after = s.colocations_of(1);
    REQUIRE(after.size() == 2);
    CHECK(after[0].job_a == 2);
    CHECK(after[0].end.value_or(0) == 1200);
    CHECK(after[1].job_a == 5);
    CHECK(after[1].sharing == "node");
    CHECK(after[1].end.value_or(0) == 1300);
    REQUIRE(s.colocations_of(3).size() == 1);
    CHECK_FALSE(s.colocations_of(3)[0].end);
    s.record_ended(4, "n2", 1400, 0, 400, true);
    CHECK(s.colocations_of(3)[0].end.value_or(0) == 1400);
    CHECK(s.colocations_of(5).size() == 1);
}

TEST_CASE("store: a second placement for the same job and node is refused, nothing half-written") {
    Store s(coloc::test::scratch("dup.db"));
    PlacementRow a = placement(5, "n1", {0});
    s.record_placement(job(5, 1), a, {});
    PlacementRow b = placement(5, "n1", {2});
    CHECK_THROWS_AS(s.record_placement(job(5, 1), b, {{5, 6, "n1", "node", 1, std::nullopt}}), StoreError);
    CHECK(s.placements_of(5).size() == 1);
    CHECK(s.colocations_of(5).empty());  // the transaction rolled back as a whole
}

TEST_CASE("store: an older schema is migrated forward with its data, a newer one is refused") {
    std::string path = coloc::test::scratch("old.db");
    {
        Database db(path);
        db.exec(migrations()[0]);
        db.exec("PRAGMA user_version = 1");
        db.exec("INSERT INTO jobs (job_id, uid, first_seen, state) VALUES (77, 5, 1, 'ended')");
    }
    {
        Store s(path);
        CHECK(s.schema_version() == kSchemaVersion);
        REQUIRE(s.job(77));
        CHECK(s.job(77)->uid == 5);
        s.save_model_params("coloc", R"({"a":1})", 2);  // a table that version 2 added
        CHECK(s.load_model_params("coloc").value_or("") == R"({"a":1})");
        CHECK_FALSE(s.load_model_params("other"));
    }
    {
        Database db(path);
        db.exec("PRAGMA user_version = 99");
    }
    CHECK_THROWS_WITH_AS(Store{path}, doctest::Contains("newer than this colocd"), StoreError);
}

TEST_CASE("store: the WAL is copied into the database while colocd commits (the checkpointer thread)") {
    const std::string path = coloc::test::scratch("checkpoint.db");
    Store s(path);
    auto db_bytes = [&] { return std::filesystem::file_size(path); };
    const auto empty = db_bytes();
    // Well past the checkpoint threshold (kPages of WAL): a placement with 4 KB of
    // alternatives takes a page or two of its own.
    const std::string big(4000, 'x');
    for (std::int64_t id = 1; id <= 2 * WalCheckpointer::kPages; ++id) {
        PlacementRow p = placement(id, "n1", {0});
        p.alternatives = "\"" + big + "\"";
        s.record_placement(job(id, 1000), p, {});
    }
    // The checkpointer's thread copies them: the database file grows without another commit.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (db_bytes() < empty + 4 * 1024 * 1024 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(db_bytes() >= empty + 4 * 1024 * 1024);
    CHECK(s.job(2 * WalCheckpointer::kPages).has_value());
}
