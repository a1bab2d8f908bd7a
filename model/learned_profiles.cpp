#include "model/learned_profiles.hpp"

#include <cmath>

namespace coloc::model {

std::optional<SoloKey> solo_key(const ProfileCatalogue& catalogue, std::string_view profile, std::string_view user,
                                std::string_view job_name) {
    if (!profile.empty() && catalogue.find(profile)) return SoloKey{std::string(profile), false};
    if (user.empty() || job_name.empty()) return std::nullopt;
    return SoloKey{std::string(user) + "/" + std::string(job_name), true};
}

LearnedProfiles::Runs& LearnedProfiles::runs_of(const SoloKey& key) {
    Runs& r = runs_[key.name];
    if (key.learned && !r.profile) {
        r.profile = std::make_unique<JobProfile>(catalogue_.default_profile());
        r.profile->name = key.name;
        r.profile->id = -1;  // not in the model's catalogue: its features are read, never cached
        r.profile->serial = 0;
    }
    return r;
}

void LearnedProfiles::record_iter_time(const SoloKey& key, std::int64_t job_id, double seconds) {
    if (!std::isfinite(seconds) || seconds <= 0) return;
    Runs& r = runs_of(key);
    r.iter_time[job_id] = seconds;
    if (r.profile) {
        r.profile->iter_time_s = mean_of(r.iter_time)->mean;
        r.profile->known["iter_time_s"] = true;
    }
}

void LearnedProfiles::record_runtime(const SoloKey& key, std::int64_t job_id, double seconds) {
    if (!std::isfinite(seconds) || seconds <= 0) return;
    runs_of(key).runtime[job_id] = seconds;
}

std::optional<SoloFigure> LearnedProfiles::mean_of(const std::map<std::int64_t, double>& by_job) {
    if (by_job.empty()) return std::nullopt;
    double sum = 0;
    for (const auto& [job, s] : by_job) sum += s;
    return SoloFigure{sum / static_cast<double>(by_job.size()), static_cast<int>(by_job.size())};
}

std::optional<SoloFigure> LearnedProfiles::iter_time(std::string_view name) const {
    auto it = runs_.find(name);
    return it == runs_.end() ? std::nullopt : mean_of(it->second.iter_time);
}

std::optional<SoloFigure> LearnedProfiles::runtime(std::string_view name) const {
    auto it = runs_.find(name);
    return it == runs_.end() ? std::nullopt : mean_of(it->second.runtime);
}

void LearnedProfiles::clear() {
    for (auto& [_, r] : runs_)
        if (r.profile) retired_.push_back(std::move(r.profile));
    runs_.clear();
}

const JobProfile& LearnedProfiles::profile_for(std::string_view profile, std::string_view user,
                                               std::string_view job_name) const {
    const std::optional<SoloKey> key = solo_key(catalogue_, profile, user, job_name);
    if (key && key->learned)
        if (auto it = runs_.find(key->name); it != runs_.end() && it->second.profile) return *it->second.profile;
    return catalogue_.lookup(profile);
}

double LearnedProfiles::solo_iter_time(const JobProfile& profile) const {
    const std::optional<SoloFigure> f = iter_time(profile.name);
    return f ? f->mean : profile.iter_time_s;
}

std::vector<LearnedProfiles::Entry> LearnedProfiles::entries() const {
    std::vector<Entry> out;
    for (const JobProfile& p : catalogue_.profiles()) out.push_back({&p, false, iter_time(p.name), runtime(p.name)});
    for (const auto& [name, r] : runs_)
        if (r.profile) out.push_back({r.profile.get(), true, mean_of(r.iter_time), mean_of(r.runtime)});
    return out;
}

}  // namespace coloc::model
