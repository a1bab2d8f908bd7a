// What the brute-force reference of the placement engine needs (tests and benchmarks only):
// every GPU subset of a node, and one total order of candidates.
#pragma once

#include <cstddef>
#include <vector>

#include "place/policy.hpp"

namespace coloc::place {

// Better candidate first: lower loss, then lower node index, then lower GPU indices, so that
// equal scores always resolve the same way. (ColocPolicy::place breaks ties between nodes by
// what they have left, which a Candidate does not carry.)
bool better(const Candidate& a, const Candidate& b);

// Every k-subset of `gpus` (in order); empty when there are more than `limit` of them.
std::vector<std::vector<int>> gpu_subsets(const std::vector<int>& gpus, int k, std::size_t limit);

}  // namespace coloc::place
