// Profiles learned from solo runs: a job that ran alone tells its profile's true solo iteration
// time (from its own reports) or runtime (from its end). A job that names no catalogued profile
// gets a learned one, keyed by its user and job name, once such a run is known. Pure: colocd
// stores the runs (daemon/store) and feeds them here.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/catalogue.hpp"

namespace coloc::model {

// Whose solo figures a job's are: its catalogued profile's, or (a job that names none) those of
// its user and job name.
struct SoloKey {
    std::string name;      // the profile's name, or "USER/JOB_NAME"
    bool learned = false;  // true: no catalogued profile, a learned one
};
// The key of a job; nullopt for a job that names no catalogued profile and has no user or name.
std::optional<SoloKey> solo_key(const ProfileCatalogue& catalogue, std::string_view profile, std::string_view user,
                                std::string_view job_name);

// The mean of a figure over the solo runs that gave it.
struct SoloFigure {
    double mean = 0;
    int runs = 0;
};

class LearnedProfiles {
public:
    explicit LearnedProfiles(const ProfileCatalogue& catalogue) : catalogue_(catalogue) {}

    // A job's solo iteration time (its latest report) or runtime; a later figure of the same
    // job replaces its earlier one. Non-positive or non-finite figures are ignored.
    void record_iter_time(const SoloKey& key, std::int64_t job_id, double seconds);
    void record_runtime(const SoloKey& key, std::int64_t job_id, double seconds);

    std::optional<SoloFigure> iter_time(std::string_view name) const;
    std::optional<SoloFigure> runtime(std::string_view name) const;

    // The profile a job runs with: its catalogued one; else the learned one of its user and job
    // name once a solo run of it is known (the default profile's features, its own solo
    // iteration time); else the default profile. References stay valid while this lives.
    const JobProfile& profile_for(std::string_view profile, std::string_view user, std::string_view job_name) const;

    // The solo iteration time a job of `profile` is measured against: what its solo runs
    // reported, else what the profile says.
    double solo_iter_time(const JobProfile& profile) const;

    // Every catalogued profile (in catalogue order, the default first) and then every learned
    // one (by name), with its solo figures where runs gave them.
    struct Entry {
        const JobProfile* profile = nullptr;
        bool learned = false;
        std::optional<SoloFigure> iter_time, runtime;
    };
    std::vector<Entry> entries() const;

    // Forgets every run (colocd reloads them from its store); learned profiles go with them, but
    // stay where they are: what still points at one (a queue's record of who asked) reads it safely.
    void clear();

private:
    struct Runs {
        std::map<std::int64_t, double> iter_time, runtime;  // by job id
        std::unique_ptr<JobProfile> profile;                // learned keys only
    };
    Runs& runs_of(const SoloKey& key);
    std::vector<std::unique_ptr<JobProfile>> retired_;  // learned profiles of runs forgotten
    static std::optional<SoloFigure> mean_of(const std::map<std::int64_t, double>& by_job);

    const ProfileCatalogue& catalogue_;
    std::map<std::string, Runs, std::less<>> runs_;
};

}  // namespace coloc::model
