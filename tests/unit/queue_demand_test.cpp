// The record of submitted and queued jobs that the replay and colocd's admission hand the sharing
// rule and the engine: rates worked by hand.
#include <doctest/doctest.h>

#include "place/queue_demand.hpp"

using coloc::place::QueueDemand;

TEST_CASE("queue demand: the rates are the submissions over the time since the first") {
    QueueDemand d;
    CHECK(d.rates(100).seen_s == 0);  // nothing seen: no rate, however late
    CHECK(d.rates(100).jobs_per_s == 0);
    d.submitted(1000, 2, 1, 50);  // 100 GPU-s
    d.submitted(1100, 4, 2, 10);  // 80 GPU-s, 2 nodes of 4
    const auto r = d.rates(1200);
    CHECK(r.seen_s == doctest::Approx(200));
    CHECK(r.jobs_per_s == doctest::Approx(2.0 / 200));
    CHECK(r.offered_gpus == doctest::Approx(180.0 / 200));
    CHECK(d.nodes_wanted().submitted.at(2) == 1);
    CHECK(d.nodes_wanted().submitted.at(4) == 2);
    CHECK(d.submitted_count() == 2);
}

TEST_CASE("queue demand: a submission older than the first seen moves the start back (colocd's first read)") {
    QueueDemand d;
    d.submitted(1100, 1, 1, 10);
    d.submitted(900, 1, 1, 0);  // no time limit: counted as a job, no GPU-seconds
    const auto r = d.rates(1300);
    CHECK(r.seen_s == doctest::Approx(400));
    CHECK(r.jobs_per_s == doctest::Approx(2.0 / 400));
    CHECK(r.offered_gpus == doctest::Approx(10.0 / 400));
}

TEST_CASE("queue demand: the queue's GPU-seconds and nodes follow joins and leaves, and are 0 when it empties") {
    QueueDemand d;
    d.queued(1, 1, 0.1, +1);
    d.queued(2, 3, 0.7, +1);
    CHECK(d.queued_gpu_s() == doctest::Approx(0.1 + 4.2));
    CHECK(d.rates(0).queued_gpu_s == doctest::Approx(4.3));
    CHECK(d.nodes_wanted().queued.at(2) == 3);
    d.queued(1, 1, 0.1, -1);
    d.queued(2, 3, 0.7, -1);
    CHECK(d.queued_gpu_s() == 0.0);  // exactly, not a rounding residue
    CHECK(d.nodes_wanted().queued.at(2) == 0);
    CHECK(d.submitted_count() == 0);  // joining the queue is not a submission
}
