// Models by name, for configuration files and command lines: "baseline" | "coloc".
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/catalogue.hpp"
#include "model/model.hpp"

namespace coloc::model {

// Throws std::invalid_argument for an unknown name. The "coloc" model gets an empty catalogue
// (physics priors only); use the overload to give it the profile catalogue and its pairs.
std::unique_ptr<InterferenceModel> make_model(const std::string& name);
std::unique_ptr<InterferenceModel> make_model(const std::string& name, const ProfileCatalogue& catalogue);

}  // namespace coloc::model
