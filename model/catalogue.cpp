#include "model/catalogue.hpp"

#include <atomic>
#include <cmath>
#include <sstream>

namespace coloc::model {

namespace {
std::uint64_t next_serial() {
    static std::atomic<std::uint64_t> last{0};
    return ++last;
}
}  // namespace

std::string pair_speed_problem(double speed) {
    if (std::isfinite(speed) && speed > 0 && speed <= kMaxPairSpeed) return "";
    std::ostringstream o;
    o << "speed " << speed << " out of range (0, " << kMaxPairSpeed << "]";
    return o.str();
}

ProfileCatalogue::ProfileCatalogue() {
    JobProfile def;
    def.name = kDefaultName;
    intern(std::move(def));
}

int ProfileCatalogue::intern(JobProfile profile) {
    profile.serial = next_serial();
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
