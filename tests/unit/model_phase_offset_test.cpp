// Phase offsets (phase_offset.hpp): slots that interleave bursts on a shared link.
#include <doctest/doctest.h>

#include <vector>

#include "model/phase_offset.hpp"

using namespace coloc::model;

TEST_CASE("a second job of the same period gets a slot whose burst misses the first's") {
    const Burst a{1.0, 0.3};
    const std::vector<PhasedBurst> first{{a, 0.0}};
    const double o = interleave_offset(a, first);
    CHECK(o >= 0);
    CHECK(o < 1.0);
    CHECK(phased_extra(a, o, first) == doctest::Approx(0.0));
    CHECK(phased_extra(a, 0.0, first) == doctest::Approx(0.3));  // in step: the whole burst
}

TEST_CASE("jobs added one by one fit while their bursts fit in one period together") {
    for (const auto& [n, share] : std::vector<std::pair<int, double>>{{2, 0.5}, {3, 0.3}, {4, 0.2}}) {
        const Burst b{0.03, 0.03 * share};
        std::vector<PhasedBurst> placed;
        for (int i = 0; i < n; ++i) placed.push_back({b, interleave_offset(b, placed)});
        for (std::size_t i = 0; i < placed.size(); ++i) {
            std::vector<PhasedBurst> others = placed;
            others.erase(others.begin() + static_cast<std::ptrdiff_t>(i));
            CAPTURE(n);
            CAPTURE(share);
            CHECK(phased_extra(b, placed[i].offset_s, others) == doctest::Approx(0.0).epsilon(1e-9));
        }
    }
}

TEST_CASE("with no room the slot overlaps least, never more than in step") {
    const Burst b{1.0, 0.6};
    const std::vector<PhasedBurst> first{{b, 0.0}};
    const double o = interleave_offset(b, first);
    CHECK(phased_extra(b, o, first) == doctest::Approx(0.2).epsilon(0.02));  // 0.6 + 0.6 - 1
    CHECK(phased_extra(b, o, first) < extra_in_step(b, b));
}

TEST_CASE("neighbours of another period are left out: they drift") {
    const Burst a{1.0, 0.3}, other{1.5, 0.3};
    const std::vector<PhasedBurst> n{{other, 0.2}};
    CHECK(interleave_offset(a, n) == 0.0);
    CHECK(phased_extra(a, 0.0, n) == 0.0);
}
