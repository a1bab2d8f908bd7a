// Admission's watch (daemon/service/background_query.hpp): between full reads slurmctld is asked
// whether any job changed since the last answer; a change is answered at once, "no change" is
// no answer, and every full interval the whole table is read again.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "daemon/service/background_query.hpp"

using namespace coloc::daemon;
using coloc::slurm::SlurmSnapshot;

namespace {

// Polls at `now_ms` until the query it started (if any) was picked up (or a 5-s deadline).
std::optional<SlurmAnswer> answer_at(BackgroundQuery& q, std::int64_t now_ms) {
    std::optional<SlurmAnswer> a = q.poll(now_ms);  // starts a query when one is due
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!a && q.querying() && std::chrono::steady_clock::now() < deadline) {
        a = q.poll(now_ms);
        if (!a) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return a;
}

// A slurmctld whose job table last changed at `table_time`: "changed since" is nullopt when the
// asker's table is at least as new (slurmctld's one-second slack is libslurm's concern).
struct FakeSlurm {
    std::int64_t table_time = 100;
    std::vector<std::int64_t> asked;  // the updated_at of every query
    std::optional<SlurmSnapshot> operator()(std::int64_t since) {
        asked.push_back(since);
        if (since > 0 && since >= table_time) return std::nullopt;
        SlurmSnapshot s;
        s.updated_at = table_time;
        s.taken_at = table_time;
        return s;
    }
};

}  // namespace

TEST_CASE("background query watch: a change is answered within a watch, no change is no answer") {
    FakeSlurm slurm;
    BackgroundQuery q(60, 250, [&](std::int64_t since) { return slurm(since); });
    // The first read is a full one.
    auto a = answer_at(q, 0);
    REQUIRE(a.has_value());
    CHECK(a->ok);
    CHECK(slurm.asked == std::vector<std::int64_t>{0});
    // Not yet a watch interval later: nothing is asked.
    CHECK_FALSE(q.poll(100).has_value());
    CHECK(slurm.asked.size() == 1);
    // A watch finds the table unchanged: asked with the table's time, no answer.
    CHECK_FALSE(answer_at(q, 300).has_value());
    CHECK(slurm.asked == std::vector<std::int64_t>{0, 100});
    CHECK(q.watches() == 1);
    // A job was submitted: the next watch answers with the new table, long before 60 s.
    slurm.table_time = 101;
    a = answer_at(q, 600);
    REQUIRE(a.has_value());
    CHECK(a->snapshot.updated_at == 101);
    // The next watch asks from the new table's time.
    CHECK_FALSE(answer_at(q, 900).has_value());
    CHECK(slurm.asked.back() == 101);
}

TEST_CASE("background query watch: a full read every interval even when nothing changed") {
    FakeSlurm slurm;
    BackgroundQuery q(1, 250, [&](std::int64_t since) { return slurm(since); });
    REQUIRE(answer_at(q, 0).has_value());
    CHECK_FALSE(answer_at(q, 300).has_value());  // a watch, unchanged
    // A full interval after the last table: read whole (since 0) and answered, for the leases
    // and expected ends that move with time alone.
    const auto a = answer_at(q, 1000);
    REQUIRE(a.has_value());
    CHECK(slurm.asked.back() == 0);
}

TEST_CASE("background query watch: a table a watch brought moves the next full read") {
    FakeSlurm slurm;
    BackgroundQuery q(1, 250, [&](std::int64_t since) { return slurm(since); });
    REQUIRE(answer_at(q, 0).has_value());
    slurm.table_time = 101;
    REQUIRE(answer_at(q, 800).has_value());  // a watch found a change: a fresh table at 800
    const std::size_t asked = slurm.asked.size();
    // 1000 is an interval after the first read but not after the fresh table: only a watch.
    CHECK_FALSE(answer_at(q, 1100).has_value());
    CHECK(slurm.asked.size() == asked + 1);
    CHECK(slurm.asked.back() == 101);
}

TEST_CASE("background query watch: no watch before a first table, none with watch 0 or interval 0") {
    int asked = 0;
    BackgroundQuery failing(60, 250, [&](std::int64_t) -> std::optional<SlurmSnapshot> {
        ++asked;
        throw std::runtime_error("slurmctld does not answer");
    });
    const auto a = answer_at(failing, 0);
    REQUIRE(a.has_value());
    CHECK_FALSE(a->ok);
    // Without a table there is nothing to compare with: no watch until the next full read.
    CHECK_FALSE(answer_at(failing, 1000).has_value());
    CHECK(asked == 1);

    FakeSlurm slurm;
    BackgroundQuery plain(60, 0, [&](std::int64_t since) { return slurm(since); });
    REQUIRE(answer_at(plain, 0).has_value());
    CHECK_FALSE(answer_at(plain, 5000).has_value());
    CHECK(slurm.asked.size() == 1);
    CHECK(plain.watches() == 0);

    BackgroundQuery off(0, 250, [&](std::int64_t since) { return slurm(since); });
    CHECK_FALSE(off.enabled());
    CHECK_FALSE(answer_at(off, 0).has_value());
    CHECK(slurm.asked.size() == 1);
}
