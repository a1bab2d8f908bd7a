// The composed link term (phase_compose.hpp) against the pairwise sum and the simulator.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "tests/support/phase_compose.hpp"
#include "tests/support/phase_sim.hpp"

using namespace coloc::model;

TEST_CASE("composed link term: jobs in step keep the pairwise sum") {
    const std::vector<LinkJob> jobs{{{1.0, 0.2}, {}}, {{1.0, 0.3}, {}}, {{1.0, 0.1}, {}}};
    const auto extra = composed_link_extra(jobs);
    CHECK(extra[0] == doctest::Approx(0.2 + 0.1));
    CHECK(extra[1] == doctest::Approx(0.2 + 0.1));
    CHECK(extra[2] == doctest::Approx(0.1 + 0.1));
}

TEST_CASE("composed link term: three drifting jobs slow one another more than the pairwise sum") {
    const std::vector<LinkJob> jobs{{{1.0, 0.4}, {}}, {{1.03, 0.4}, {}}, {{1.0609, 0.4}, {}}};
    const auto extra = composed_link_extra(jobs);
    const double pairwise = link_extra(jobs[0].burst, jobs[1].burst, {}) + link_extra(jobs[0].burst, jobs[2].burst, {});
    CHECK(extra[0] > pairwise);
    const SimJob sim[3] = {{0.6, 0.4, 0.0}, {0.63, 0.4, 0.0}, {0.6609, 0.4, 0.0}};
    const double simulated = simulate_link(sim, 300.0, 1e-3, 5).slowdown[0];
    CHECK(std::abs(1 + extra[0] - simulated) < std::abs(1 + pairwise - simulated));
}

TEST_CASE("composed link term: two drifting jobs keep the pairwise form") {
    const std::vector<LinkJob> jobs{{{1.0, 0.2}, {}}, {{1.03, 0.2}, {}}};
    const auto extra = composed_link_extra(jobs);
    CHECK(extra[0] == doctest::Approx(link_extra(jobs[0].burst, jobs[1].burst, {})));
    CHECK(extra[1] == doctest::Approx(link_extra(jobs[1].burst, jobs[0].burst, {})));
}

TEST_CASE("composed link term: bursts that do not fit into a period together slow every job to the link's capacity") {
    const std::vector<LinkJob> jobs{{{1.0, 0.5}, 0.0}, {{1.0, 0.5}, 0.25}, {{1.0, 0.5}, 0.5}, {{1.0, 0.5}, 0.75}};
    for (double e : composed_link_extra(jobs)) CHECK(e >= 1.0 - 1e-12);  // 4 x 0.5 of the link: 2 periods
}
