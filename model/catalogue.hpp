// The profile catalogue: job profiles interned by name (ids index arrays in the model's caches),
// a default profile for jobs that name none, and the measured same-GPU pairs the catalogue
// carries as the model's reference data. Pure: loading lives in model/io/.
#pragma once

#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/profile.hpp"

namespace coloc::model {

// Speed of `job` relative to solo while it shares one `gpu_type` GPU with `neighbour`.
struct MeasuredPair {
    std::string job;
    std::string neighbour;
    std::string gpu_type;
    double speed = 1;
};

// The one rule for a measured pair's speed, wherever a pair comes from (a catalogue, or the
// measurements fit reads): above 0, and at most a little above solo (measurement noise); a
// larger value is a typo or throughputs in different units.
constexpr double kMaxPairSpeed = 1.5;
// Why `speed` breaks that rule ("speed 6 out of range (0, 1.5]"), or "" when it does not.
std::string pair_speed_problem(double speed);

class ProfileCatalogue {
public:
    static constexpr const char* kDefaultName = "default";

    ProfileCatalogue();  // holds the built-in default profile as id 0

    // Adds a profile, or replaces the one with the same name keeping its id. Returns the id.
    // References returned earlier stay valid (storage never moves).
    int intern(JobProfile profile);
    const JobProfile* find(std::string_view name) const;
    const JobProfile& at(int id) const { return profiles_.at(static_cast<std::size_t>(id)); }
    const JobProfile& default_profile() const { return profiles_.front(); }
    // The named profile, or the default one when the name is empty or unknown.
    const JobProfile& lookup(std::string_view name) const;
    int size() const { return static_cast<int>(profiles_.size()); }
    const std::deque<JobProfile>& profiles() const { return profiles_; }

    void add_pair(MeasuredPair pair) { pairs_.push_back(std::move(pair)); }
    const std::vector<MeasuredPair>& pairs() const { return pairs_; }

private:
    std::deque<JobProfile> profiles_;
    std::unordered_map<std::string, int> ids_;
    std::vector<MeasuredPair> pairs_;
};

}  // namespace coloc::model
