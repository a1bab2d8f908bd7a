#include "daemon/service/state.hpp"

#include <ctime>

#include "daemon/log.hpp"
#include "model/factory.hpp"
#include "model/hardware.hpp"
#include "model/io/profiles_yaml.hpp"

namespace coloc::daemon {

namespace {

model::ProfileCatalogue load_catalogue(const std::string& path) {
    if (path.empty()) return {};
    try {
        return model::io::load_profiles_yaml(path);
    } catch (const std::exception& e) {
        throw ConfigError(std::string("profiles: ") + e.what());
    }
}

// Each node type's GPUs, told to the model at start: the same-GPU term of a node uses its GPU
// type's measured pairs and learned parameters, and its memory decides whether two jobs fit.
// Returns what is left to a fallback.
std::vector<std::string> configure_hardware(const Config& cfg, model::InterferenceModel& model) {
    std::vector<std::string> notes = cfg.notes;
    for (const std::string& n : model::configure_hardware(model, place::gpu_hardware(cfg.topology),
                                                          model::learned_gpu_params(cfg.model_params)))
        notes.push_back(n);
    for (const auto& [type, file] : cfg.model_params_files)
        log_info("same-GPU parameters for " + type + " loaded from " + file);
    for (const std::string& n : notes) log_info("warning: " + n);
    return notes;
}

}  // namespace

State::State(Config config)
    : cfg(std::move(config)),
      store(cfg.database, cfg.database_sync_full,
            {cfg.database_backlog_max, cfg.database_retry_s, cfg.database_retry_max_s, database_journal_path(cfg),
             static_cast<std::uint64_t>(cfg.database_journal_reserve_mb) << 20}),
      catalogue(load_catalogue(cfg.profiles)),
      model(model::make_model(cfg.model, catalogue)),
      hardware_notes(configure_hardware(cfg, *model)),
      policy(*model),
      cluster(cfg.topology),
      started_at(now_s()) {}

std::int64_t State::now_s() { return static_cast<std::int64_t>(std::time(nullptr)); }

const model::JobProfile* State::profile_for(const std::string& name, const std::string& user,
                                            const std::string& job_name) const {
    return &learned.profile_for(name, user, job_name);
}

bool State::profile_unknown(const std::string& name) const { return !name.empty() && !catalogue.find(name); }

void State::occupy(std::int64_t job_id, const model::JobProfile* profile, int node, const std::vector<int>& gpus,
                   bool enforce_slots, std::int64_t since) {
    const auto id = static_cast<place::JobId>(job_id);
    place::Placement p{node, gpus};
    if (cluster.find(id)) {
        ++cluster_version;
        cluster.extend(id, p, enforce_slots);
        return;
    }
    add_running({.id = id, .profile = profile, .where = {p}, .since = static_cast<double>(since)}, enforce_slots);
}

void State::release(std::int64_t job_id, int node) {
    const auto id = static_cast<place::JobId>(job_id);
    const place::RunningJob* job = cluster.find(id);
    if (!job) return;
    ++cluster_version;
    place::RunningJob rest = *job;
    cluster.remove(id);
    std::erase_if(rest.where, [&](const place::Placement& p) { return p.node == node; });
    if (rest.where.empty()) return;
    cluster.add(std::move(rest), /*enforce_slots=*/false);
}

void State::add_running(place::RunningJob job, bool enforce_slots) {
    ++cluster_version;
    cluster.add(std::move(job), enforce_slots);
}

}  // namespace coloc::daemon
