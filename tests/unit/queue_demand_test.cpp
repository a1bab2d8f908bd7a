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

TEST_CASE("queue demand: with a window, the rates are those of the current epoch and the one before") {
    QueueDemand d(100);
    d.submitted(0, 1, 1, 10);
    d.submitted(50, 2, 1, 10);
    d.advance(150);  // [0, 100) is the previous epoch, [100, 200) the current
    auto r = d.rates(150);
    CHECK(r.counted_s == doctest::Approx(150));
    CHECK(r.seen_s == doctest::Approx(150));
    CHECK(r.jobs_per_s == doctest::Approx(2.0 / 150));
    d.submitted(160, 4, 2, 10);
    d.advance(250);  // [0, 100) let go: [100, 200) is the previous epoch
    r = d.rates(250);
    CHECK(r.counted_s == doctest::Approx(150));
    CHECK(r.seen_s == doctest::Approx(250));  // trusted as far ahead as arrivals were watched
    CHECK(r.jobs_per_s == doctest::Approx(1.0 / 150));
    CHECK(r.offered_gpus == doctest::Approx(80.0 / 150));
    CHECK(d.nodes_wanted().submitted.at(1) == 0);  // the nodes asked for go with their epoch
    CHECK(d.nodes_wanted().submitted.at(2) == 0);
    CHECK(d.nodes_wanted().submitted.at(4) == 2);
    CHECK(d.submitted_count() == 3);
}

TEST_CASE("queue demand: after a silence of two windows the rate is none seen over a window") {
    QueueDemand d(100);
    d.submitted(0, 1, 1, 10);
    d.submitted(10, 1, 1, 10);
    d.advance(1000);
    auto r = d.rates(1000);
    CHECK(r.counted_s == doctest::Approx(100));
    CHECK(r.seen_s == doctest::Approx(1000));
    CHECK(r.jobs_per_s == 0);
    CHECK(d.nodes_wanted().submitted.at(1) == 0);
    d.submitted(500, 1, 1, 10);  // shown late, but older than the window: not counted
    CHECK(d.rates(1000).jobs_per_s == 0);
    d.submitted(950, 1, 1, 10);  // within the window (the previous epoch): counted
    CHECK(d.rates(1000).jobs_per_s == doctest::Approx(1.0 / 100));
}

TEST_CASE("queue demand: a long first read fills the window as colocd starts, no more") {
    // colocd's first read shows jobs submitted over three windows before it started.
    QueueDemand windowed(100), forever(0);
    for (double t : {1000.0, 700.0, 960.0, 850.0, 990.0}) {
        windowed.submitted(t, 1, 1, 0);
        forever.submitted(t, 1, 1, 0);
    }
    windowed.advance(1000);
    forever.advance(1000);
    // Forever: 5 jobs since 700. Windowed: 700 and 850 are more than a window before 1000, the
    // latest seen; the span starts at 960, the oldest within it.
    CHECK(forever.rates(1000).jobs_per_s == doctest::Approx(5.0 / 300));
    const auto r = windowed.rates(1000);
    CHECK(r.counted_s == doctest::Approx(40));
    CHECK(r.seen_s == doctest::Approx(300));  // 700 was seen, if not counted
    CHECK(r.jobs_per_s == doctest::Approx(3.0 / 40));
    CHECK(windowed.submitted_count() == 5);
    // And the first epoch rolls from where it starts: at 1060 it is the previous one.
    windowed.advance(1100);
    CHECK(windowed.rates(1100).counted_s == doctest::Approx(140));
    CHECK(windowed.rates(1100).jobs_per_s == doctest::Approx(3.0 / 140));
}
