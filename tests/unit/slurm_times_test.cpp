// The job times colocd's history takes from Slurm's queue (daemon/service/slurm_times.hpp).
#include <doctest/doctest.h>

#include <set>

#include "daemon/service/slurm_times.hpp"

using namespace coloc;
using namespace coloc::daemon;

namespace {

slurm::SlurmJob job(std::int64_t id, bool running, std::int64_t submitted, std::int64_t limit_s) {
    slurm::SlurmJob j;
    j.job_id = id;
    j.running = running;
    j.pending = !running;
    j.submit_time = submitted;
    j.time_limit_s = limit_s;
    return j;
}

}  // namespace

TEST_CASE("slurm times: a job Slurm started between two reads gets its times from the later read") {
    slurm::SlurmSnapshot first, second;
    first.jobs = {job(1, false, 100, 600), job(2, true, 90, 300)};
    const SlurmTimes before = times_in(first);
    CHECK(before.size() == 2);
    CHECK(before.at(1).submitted == 100);
    CHECK(before.at(1).time_limit_s == 600);
    // 1 was read while it pended, 2 running; 3 and 4 were submitted and started since; 5 pends;
    // colocd launched 1, 2 and 3, not 4 (the plugin has not asked yet: its launch finds them).
    second.jobs = {job(1, true, 100, 600), job(2, true, 90, 300), job(3, true, 110, 60), job(4, true, 111, 60),
                   job(5, false, 112, 60)};
    const std::set<std::int64_t> launched = {1, 2, 3};
    const auto late = launched_between_reads(second, before, [&](std::int64_t id) { return launched.count(id) > 0; });
    REQUIRE(late.size() == 1);
    CHECK(late[0].first == 3);
    CHECK(late[0].second.submitted == 110);
    CHECK(late[0].second.time_limit_s == 60);
    // A job Slurm shows without a submit time holds nothing to keep.
    slurm::SlurmSnapshot third;
    third.jobs = {job(6, true, 0, 60)};
    CHECK(launched_between_reads(third, times_in(second), [](std::int64_t) { return true; }).empty());
    CHECK(times_in(third).empty());
}
