// What engine tests that replay many decisions share: two engines' choices compared, and the
// chosen placement started so that the next decision sees it.
#pragma once

#include <doctest/doctest.h>

#include <vector>

#include "place/policy.hpp"

namespace coloc::test {

// The same placement, and the same predicted loss, from two engines.
inline void check_same_choice(const place::Decision& a, const place::Decision& b) {
    CHECK(a.chosen.loss == doctest::Approx(b.chosen.loss).epsilon(1e-12));
    REQUIRE(a.chosen.where.size() == b.chosen.where.size());
    for (std::size_t p = 0; p < a.chosen.where.size(); ++p) {
        CHECK(a.chosen.where[p].node == b.chosen.where[p].node);
        CHECK(a.chosen.where[p].gpus == b.chosen.where[p].gpus);
    }
}

// Starts the request's job where `d` placed it, and remembers it among the running.
inline void start_chosen(place::ClusterState& state, const place::JobRequest& r, const place::Decision& d,
                         std::vector<place::JobId>& running) {
    place::RunningJob j;
    j.id = r.id;
    j.profile = r.profile;
    j.where = d.chosen.where;
    REQUIRE(state.add(j));
    running.push_back(r.id);
}

}  // namespace coloc::test
