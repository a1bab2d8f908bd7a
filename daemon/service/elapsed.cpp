// Learning from what jobs take, with no report from them: when a job ends, its elapsed time
// against its solo work (the solo runs of its profile, or of its user and job name, else the
// runtime its profile declares) over the co-location intervals colocd recorded for it is one
// equation on its neighbours' delays (model/interval_regression.hpp). The usable runs are kept
// per GPU type, the latest elapsed_window of them; every elapsed_refit_every usable runs the
// pair delays are refitted and the model learns them (Learner::learn_elapsed), stored before
// the reply as an observation's are. Runs that failed, were too short, had no solo reference
// or never shared are counted.
#include <map>
#include <nlohmann/json.hpp>

#include "daemon/log.hpp"
#include "daemon/service/learning.hpp"
#include "model/learner.hpp"
#include "model/run_history.hpp"

namespace coloc::daemon {

using proto::json;

model::ElapsedWindow& Learning::elapsed_window(const std::string& gpu_type) {
    auto it = elapsed_.find(gpu_type);
    if (it != elapsed_.end()) return it->second;
    model::ElapsedWindowOptions o;
    o.fit.min_elapsed_s = state_.cfg.elapsed_min_s;
    o.capacity = static_cast<std::size_t>(state_.cfg.elapsed_window);
    o.refit_every = state_.cfg.elapsed_refit_every;
    return elapsed_.emplace(gpu_type, model::ElapsedWindow(o)).first->second;
}

std::optional<Learning::EndedJob> Learning::ended_run(const JobRow& row, const std::vector<ColocationRow>& shared) {
    const JobRow* job = &row;
    const std::int64_t job_id = row.job_id;
    if (!job->end) return std::nullopt;
    // The GPU type of the node it ran on first: a same-GPU pair is learned per GPU type.
    const std::vector<PlacementRow> placed = state_.store.placements_of(job_id);
    const int node = placed.empty() ? -1 : state_.cfg.topology.node_index(placed.front().node);
    if (node < 0) return std::nullopt;
    EndedJob out{state_.cfg.topology.type_of(node).gpu.gpu_type, {}};

    model::JobHistory h;
    h.job_id = job_id;
    h.state = to_string(job->state);
    h.exit_status = job->exit_status;
    h.end = static_cast<double>(*job->end);
    // The plugin measures the elapsed time; colocd's own clock only says when it ended.
    const double elapsed = job->elapsed_s && *job->elapsed_s > 0 ? *job->elapsed_s
                           : job->start                          ? h.end - static_cast<double>(*job->start)
                                                                 : 0.0;
    h.start = h.end - elapsed;
    for (const ColocationRow& c : shared)
        if (const auto where = model::sharing_from_string(c.sharing))
            h.shared.push_back({c.job_a == job_id ? c.job_b : c.job_a, *where, static_cast<double>(c.start),
                                static_cast<double>(c.end.value_or(*job->end))});
    std::map<std::int64_t, std::string> names;
    auto name_of = [&](std::int64_t id) {
        auto [it, fresh] = names.try_emplace(id);
        if (fresh) {
            const std::optional<JobRow> other = state_.store.job(id);
            it->second =
                (other ? state_.profile_for(other->profile, other->user, other->job_name) : state_.profile_for(""))
                    ->name;
        }
        return it->second;
    };
    model::EndedRun& r = out.run;
    const model::JobProfile& profile = *state_.profile_for(job->profile, job->user, job->job_name);
    r.job = profile.name;
    // A non-zero exit status fails a run whatever its state says.
    r.state = model::completed(h) ? "COMPLETED" : (job->state == JobState::Ended ? "FAILED" : to_string(job->state));
    r.elapsed_s = elapsed;
    r.gpus = model::gpus_held(placed);
    r.intervals = model::intervals_of(h, name_of);
    // Solo work: what solo runs took, else what the profile declares.
    if (const auto key = model::solo_key(state_.catalogue, job->profile, job->user, job->job_name))
        if (const auto solo = state_.learned.runtime(key->name)) r.solo_s = solo->mean;
    if (!(r.solo_s > 0) && profile.has("runtime_s")) r.solo_s = profile.runtime_s;
    return out;
}

void Learning::learn_from_ended(const JobRow& job, const std::vector<ColocationRow>& shared) {
    model::Learner* learner = state_.model->learner();
    if (!learner) return;
    std::optional<EndedJob> ended = ended_run(job, shared);
    if (!ended) return;
    model::ElapsedWindow& window = elapsed_window(ended->gpu_type);
    if (!window.add(std::move(ended->run))) return;
    std::unique_ptr<model::Learner::Saved> before = learner->save();
    const model::IntervalFit fit = learner->learn_elapsed(window.runs(), window.options().fit, ended->gpu_type);
    try {
        state_.store.save_model_params(state_.model->name(), learner->params_json().dump(), State::now_s());
    } catch (...) {
        learner->restore(std::move(before));  // what is not stored is not learned
        throw;
    }
    ++state_.counters.elapsed_refits;
    log_info("pair delays refitted from " + std::to_string(fit.used) + " ended " + ended->gpu_type + " jobs (" +
             std::to_string(fit.pairs.size()) + " pairs)");
}

// At start: the latest ended jobs in the store fill the windows again (what was learned from
// them is in the stored parameters already), so the next refit keeps their evidence.
void Learning::load_ended_runs() {
    elapsed_.clear();
    if (!state_.model->learner()) return;
    std::vector<JobRow> latest = state_.store.jobs(-1, state_.cfg.elapsed_window);
    for (auto it = latest.rbegin(); it != latest.rend(); ++it) {
        if (!it->end) continue;
        const std::optional<JobRow> job = state_.store.job(it->job_id);  // the backlog's writes too
        if (!job) continue;
        if (std::optional<EndedJob> ended = ended_run(*job, state_.store.colocations_of(it->job_id)))
            elapsed_window(ended->gpu_type).add(std::move(ended->run));
    }
}

Learning::ElapsedCounts Learning::elapsed_counts() const {
    ElapsedCounts c;
    for (const auto& [type, w] : elapsed_) {
        c.used += w.used();
        c.left_out["failed"] += w.left_out().failed;
        c.left_out["too_short"] += w.left_out().too_short;
        c.left_out["no_solo"] += w.left_out().no_solo;
        c.left_out["alone"] += w.left_out().alone;
        c.left_out["several_gpus"] += w.left_out().several_gpus;
    }
    for (const char* reason : {"failed", "too_short", "no_solo", "alone", "several_gpus"}) c.left_out[reason] += 0;
    return c;
}

void Learning::status(json& status) const {
    const ElapsedCounts c = elapsed_counts();
    status["elapsed_jobs_used"] = c.used;
    for (const auto& [reason, n] : c.left_out) status["elapsed_left_out_" + reason] = n;
    status["elapsed_refits"] = state_.counters.elapsed_refits;
}

}  // namespace coloc::daemon
