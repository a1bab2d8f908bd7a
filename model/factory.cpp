#include "model/factory.hpp"

#include <stdexcept>

#include "model/baseline.hpp"
#include "model/coloc_model.hpp"

namespace coloc::model {

std::unique_ptr<InterferenceModel> make_model(const std::string& name) { return make_model(name, ProfileCatalogue{}); }

std::unique_ptr<InterferenceModel> make_model(const std::string& name, const ProfileCatalogue& catalogue) {
    if (name == "baseline") return std::make_unique<BaselineModel>();
    if (name == "coloc") return std::make_unique<ColocModel>(catalogue);
    throw std::invalid_argument("unknown model '" + name + "' (expected baseline or coloc)");
}

}  // namespace coloc::model
