#include "model/catalogue.hpp"

namespace coloc::model {

ProfileCatalogue::ProfileCatalogue() {
    JobProfile def;
    def.name = kDefaultName;
    intern(std::move(def));
}

int ProfileCatalogue::intern(JobProfile profile) {
    auto it = ids_.find(profile.name);
    if (it != ids_.end()) {
        profile.id = it->second;
        profiles_[static_cast<std::size_t>(it->second)] = std::move(profile);
        return it->second;
    }
    const int id = size();
    profile.id = id;
    ids_.emplace(profile.name, id);
    profiles_.push_back(std::move(profile));
    return id;
}

const JobProfile* ProfileCatalogue::find(std::string_view name) const {
    auto it = ids_.find(std::string(name));
    return it == ids_.end() ? nullptr : &profiles_[static_cast<std::size_t>(it->second)];
}

const JobProfile& ProfileCatalogue::lookup(std::string_view name) const {
    if (name.empty()) return default_profile();
    const JobProfile* p = find(name);
    return p ? *p : default_profile();
}

}  // namespace coloc::model
