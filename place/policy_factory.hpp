// Policies by name, for colocctl, the replay and the benchmarks.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "place/coloc_policy.hpp"
#include "place/policy.hpp"

namespace coloc::place {

// exclusive, slurm, pack, spread, coloc.
const std::vector<std::string>& policy_names();

// `model` is required for `coloc` (it places by the model) and optional for the others (their
// decisions then carry the model's predictions, for explain). Throws std::invalid_argument for
// an unknown name, listing the known ones.
std::unique_ptr<Policy> make_policy(const std::string& name, const model::InterferenceModel* model,
                                    const ColocOptions& coloc = {});

// Splits "a,b,c" and checks every name; throws std::invalid_argument as make_policy does.
std::vector<std::string> parse_policy_list(const std::string& list);

}  // namespace coloc::place
