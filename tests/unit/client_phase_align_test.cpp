// Phase alignment (client/phase_align.hpp): iterations held to slots on the wall clock.
#include <doctest/doctest.h>

#include <cstdlib>

#include "client/phase_align.hpp"

using namespace coloc::client;

TEST_CASE("the first iteration waits for its slot on the wall-clock grid") {
    PhaseAligner a({.offset_s = 0.25, .period_s = 1.0, .max_share = 0.1, .slack = 0.0});
    CHECK(a.wait_before_iteration(100.0) == doctest::Approx(0.25));
    PhaseAligner b({.offset_s = 0.25, .period_s = 1.0, .max_share = 0.1, .slack = 0.0});
    CHECK(b.wait_before_iteration(100.5) == doctest::Approx(0.75));
}

TEST_CASE("later iterations sleep only when a little early, never more than the share") {
    PhaseAligner a({.offset_s = 0.0, .period_s = 1.0, .max_share = 0.1, .slack = 0.0});
    CHECK(a.wait_before_iteration(10.0) == doctest::Approx(0.0));
    CHECK(a.wait_before_iteration(10.95) == doctest::Approx(0.05));  // early: wait for the slot
    CHECK(a.wait_before_iteration(11.6) == doctest::Approx(0.1));    // far early: at most 0.1
    CHECK(a.wait_before_iteration(12.2) == 0.0);                     // late: run on
}

TEST_CASE("the grid is stretched by the slack so that a job at its period waits, not drifts") {
    PhaseAligner a({.offset_s = 0.0, .period_s = 1.0, .max_share = 0.1, .slack = 0.02});
    CHECK(a.grid_period() == doctest::Approx(1.02));
    a.wait_before_iteration(0.0);
    CHECK(a.wait_before_iteration(1.0) == doctest::Approx(0.02));
}

TEST_CASE("alignment is opt-in and rejects bad settings with the variable's name") {
    std::string why;
    unsetenv("COLOC_PHASE_ALIGN");
    CHECK_FALSE(phase_settings_from_env(why));
    CHECK(why.empty());
    setenv("COLOC_PHASE_ALIGN", "1", 1);
    setenv("COLOC_PHASE_OFFSET_S", "0.5", 1);
    setenv("COLOC_PHASE_PERIOD_S", "2", 1);
    auto s = phase_settings_from_env(why);
    REQUIRE(s);
    CHECK(s->offset_s == 0.5);
    CHECK(s->period_s == 2.0);
    setenv("COLOC_PHASE_OFFSET_S", "soon", 1);
    CHECK_FALSE(phase_settings_from_env(why));
    CHECK(why.find("COLOC_PHASE_OFFSET_S") != std::string::npos);
    unsetenv("COLOC_PHASE_ALIGN");
    unsetenv("COLOC_PHASE_OFFSET_S");
    unsetenv("COLOC_PHASE_PERIOD_S");
}
