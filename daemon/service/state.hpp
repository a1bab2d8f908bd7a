// What colocd knows, shared by the parts of the service (daemon/service/service.hpp): its
// configuration, the history store, the profiles and the model, the cluster as colocd sees it,
// and the counters and metrics every part adds to. Each part is handed this by reference and
// keeps its own state to itself.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "daemon/metrics.hpp"
#include "daemon/service/access.hpp"
#include "daemon/store/store.hpp"
#include "model/catalogue.hpp"
#include "model/learned_profiles.hpp"
#include "model/model.hpp"
#include "place/cluster_state.hpp"
#include "place/coloc_policy.hpp"

namespace coloc::daemon {

struct Counters {
    std::int64_t requests = 0;
    std::int64_t refused = 0;       // any error reply
    std::int64_t auth_refused = 0;  // credential problems
    std::int64_t placements = 0;    // new decisions
    std::int64_t reused = 0;        // later steps answered from an earlier decision
    std::int64_t adopted = 0;       // fallback placements the plugin reported afterwards
    std::int64_t moved = 0;         // jobs found running on other GPUs than colocd chose
    std::int64_t ended = 0;
    std::int64_t observations = 0;    // iteration timings the model learned from
    std::int64_t elapsed_refits = 0;  // pair delays refitted from ended jobs' elapsed times
};

struct State {
    // Opens the store and loads the profiles and the model; throws ConfigError or StoreError.
    explicit State(Config config);
    State(const State&) = delete;
    State& operator=(const State&) = delete;

    const Config cfg;
    Store store;
    const model::ProfileCatalogue catalogue;
    model::LearnedProfiles learned{catalogue};
    const std::unique_ptr<model::InterferenceModel> model;
    // What colocd.yaml or the data leave to a fallback (logged at start, shown by status).
    const std::vector<std::string> hardware_notes;
    place::ColocPolicy policy;
    place::ClusterState cluster;
    // Goes up with every change of `cluster` through occupy, release or add_running: node
    // steering recomputes when it moved.
    std::uint64_t cluster_version = 0;
    Counters counters;
    MetricsSnapshot metrics;  // histograms and refusals by code; counters are copied in on read
    const std::int64_t started_at;
    UserNames user_names;

    // The profile a job runs with: the one it names, else the one learned for its user and
    // job name, else the default (model::LearnedProfiles).
    const model::JobProfile* profile_for(const std::string& name, const std::string& user = "",
                                         const std::string& job_name = "") const;
    // A name the job gave that the catalogue does not hold: it runs as the default profile, and
    // colocd keeps the name as typed (colocctl shows "default (unknown: NAME)").
    bool profile_unknown(const std::string& name) const;

    // The job holds `gpus` on `node` from `since` (epoch seconds), besides what it holds elsewhere.
    void occupy(std::int64_t job_id, const model::JobProfile* profile, int node, const std::vector<int>& gpus,
                bool enforce_slots, std::int64_t since);
    // The job holds nothing on `node` any more.
    void release(std::int64_t job_id, int node);
    // A job placed on all of its nodes at once.
    void add_running(place::RunningJob job, bool enforce_slots);

    static std::int64_t now_s();
};

}  // namespace coloc::daemon
