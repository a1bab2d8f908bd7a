// Shared-link term: closed form (phase.hpp) against the time-stepped simulator (phase_sim.hpp).
#include <doctest/doctest.h>

#include "model/phase.hpp"
#include "tests/support/phase_sim.hpp"

using namespace coloc::model;

namespace {
double simulated(double Ta, double ba, double Tb, double bb, double start_b, int job = 0) {
    const SimJob jobs[2] = {{Ta - ba, ba, 0.0}, {Tb - bb, bb, start_b}};
    return simulate_link(jobs, 200.0, 1e-3, 5).slowdown[static_cast<std::size_t>(job)];
}
}  // namespace

TEST_CASE("two equal jobs in step are both slowed by their overlap") {
    const Burst a{1.0, 0.3}, b{1.0, 0.3};
    CHECK(regime(a, b, std::nullopt) == PhaseRegime::InStep);
    CHECK(1 + link_delta(a, b, std::nullopt) == doctest::Approx(1.3));
    CHECK(simulated(1.0, 0.3, 1.0, 0.3, 0.0, 0) == doctest::Approx(1.3).epsilon(0.005));
    CHECK(simulated(1.0, 0.3, 1.0, 0.3, 0.0, 1) == doctest::Approx(1.3).epsilon(0.005));
}

TEST_CASE("unequal bursts in step: both lose the shorter burst") {
    const Burst a{1.0, 0.1}, b{1.0, 0.4};
    CHECK(link_delta(a, b, std::nullopt) == doctest::Approx(0.1));
    CHECK(link_delta(b, a, std::nullopt) == doctest::Approx(0.1));
    CHECK(simulated(1.0, 0.1, 1.0, 0.4, 0.0, 0) == doctest::Approx(1.1).epsilon(0.005));
    CHECK(simulated(1.0, 0.1, 1.0, 0.4, 0.0, 1) == doctest::Approx(1.1).epsilon(0.005));
}

TEST_CASE("interleaved bursts that fit in one period do not slow each other") {
    const Burst a{1.0, 0.4}, b{1.0, 0.5};
    CHECK(extra_interleaved(a, b) == 0.0);
    CHECK(link_delta(a, b, 0.4) == 0.0);  // b starts when a's burst ends
    CHECK(simulated(1.0, 0.4, 1.0, 0.5, 0.4, 0) == doctest::Approx(1.0).epsilon(0.002));
    CHECK(simulated(1.0, 0.4, 1.0, 0.5, 0.4, 1) == doctest::Approx(1.0).epsilon(0.002));
    CHECK(extra_interleaved(Burst{1.0, 0.7}, Burst{1.0, 0.6}) == doctest::Approx(0.3));
}

TEST_CASE("a partial offset is preserved and costs the original overlap") {
    for (double off : {0.05, 0.15, 0.25, 0.9}) {
        const Burst a{1.0, 0.3}, b{1.0, 0.3};
        CAPTURE(off);
        CHECK(1 + link_delta(a, b, off) == doctest::Approx(simulated(1.0, 0.3, 1.0, 0.3, off)).epsilon(0.005));
    }
    CHECK(extra_offset(Burst{1.0, 0.3}, Burst{1.0, 0.3}, 0.1) == doctest::Approx(0.2));
    CHECK(extra_offset(Burst{1.0, 0.3}, Burst{1.0, 0.3}, 0.9) == doctest::Approx(0.2));  // wraps
}

TEST_CASE("incommensurate periods see the expected overlap") {
    const double golden = 1.6180339887;
    const Burst a{1.0, 0.3}, b{golden, 0.2 * golden};
    CHECK(regime(a, b, std::nullopt) == PhaseRegime::Drifting);
    CHECK(link_delta(a, b, std::nullopt) == doctest::Approx(0.3 * 0.2));
    CHECK(1 + link_delta(a, b, std::nullopt) ==
          doctest::Approx(simulated(1.0, 0.3, golden, 0.2 * golden, 0.0)).epsilon(0.01));
    CHECK(1 + link_delta(b, a, std::nullopt) ==
          doctest::Approx(simulated(1.0, 0.3, golden, 0.2 * golden, 0.0, 1)).epsilon(0.01));
}

TEST_CASE("no communication, no link slowdown") {
    CHECK(link_delta(Burst{1.0, 0.0}, Burst{1.0, 0.5}, std::nullopt) == 0.0);
    CHECK(link_delta(Burst{1.0, 0.5}, Burst{1.0, 0.0}, std::nullopt) == 0.0);
    const SimJob jobs[2] = {{1.0, 0.0, 0.0}, {0.5, 0.5, 0.0}};
    CHECK(simulate_link(jobs, 50, 1e-3).slowdown[0] == doctest::Approx(1.0));
}

TEST_CASE("three equal jobs in step: pairwise extras add up") {
    const Burst a{1.0, 0.2};
    const double closed = 1 + 2 * link_delta(a, a, std::nullopt);
    const SimJob jobs[3] = {{0.8, 0.2, 0.0}, {0.8, 0.2, 0.0}, {0.8, 0.2, 0.0}};
    CHECK(simulate_link(jobs, 100, 1e-3).slowdown[0] == doctest::Approx(closed).epsilon(0.005));
}

TEST_CASE("periods within the tolerance count as equal") {
    CHECK(same_period(Burst{1.0, 0.1}, Burst{1.01, 0.1}));
    CHECK_FALSE(same_period(Burst{1.0, 0.1}, Burst{1.1, 0.1}));
    CHECK_FALSE(same_period(Burst{0.0, 0.0}, Burst{0.0, 0.0}));
}
