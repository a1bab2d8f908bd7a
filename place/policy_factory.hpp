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

// Splits "a,b,c" and checks every name against `known`; throws std::invalid_argument as
// make_policy does.
std::vector<std::string> parse_policy_list(const std::string& list, const std::vector<std::string>& known);
inline std::vector<std::string> parse_policy_list(const std::string& list) {
    return parse_policy_list(list, policy_names());
}

}  // namespace coloc::place
