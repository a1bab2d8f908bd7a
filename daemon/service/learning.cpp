// Learning: a job's measured iteration time (from the job itself or a monitor) with the
// neighbours it has now teaches the model, when the model learns (model::Learner); what it
// learned is stored with the observation and loaded again at start. A report from a job
// that runs alone is its profile's solo truth (daemon/service/profiles.cpp).
#include <algorithm>

#include "daemon/log.hpp"
#include "daemon/service/learning.hpp"
#include "model/learner.hpp"
#include "proto/errors.hpp"
#include "proto/fields.hpp"
#include "proto/messages.hpp"

namespace coloc::daemon {

using proto::json;
using proto::ProtoError;
namespace code = proto::code;

Learning::Learning(State& state, const Access& access) : state_(state), access_(access) { load(); }

// The parameters first; the solo runs before the ended jobs, whose solo work they tell.
void Learning::load() {
    load_learned_params();
    load_solo_runs();
    load_ended_runs();
}

// The job's row and its intervals are read once, for both lessons: on the request thread,
// colocations_of is the costliest read of an ended report.
void Learning::job_ended(std::int64_t job_id, std::int64_t now) {
    const std::optional<JobRow> job = state_.store.job(job_id);
    if (!job) return;
    const std::vector<ColocationRow> shared = state_.store.colocations_of(job_id);
    record_solo_runtime(*job, shared, now);
    learn_from_ended(*job, shared);
}

void Learning::load_learned_params() {
    model::Learner* learner = state_.model->learner();
    if (!learner) return;
    auto saved = state_.store.load_model_params(state_.model->name());
    if (!saved) return;
    try {
        learner->load_params_json(json::parse(*saved));
        log_info("model parameters learned earlier loaded from " + state_.cfg.database);
    } catch (const std::exception& e) {
        log_error("ignoring the stored model parameters: " + std::string(e.what()));
    }
}

// The slowdown is measured against the profile's solo time; what the model learned is committed
// before the reply. The job's owner may report for it besides root and SlurmUser: that depends
// on the job, so it is checked here, not by the route's role.
json Learning::on_observe(const proto::Request& req, const proto::Identity& who) {
    const std::int64_t job_id = proto::get_int(req.body, "job_id", 1, proto::kMaxJobId);
    const double iter_time = proto::get_number_or(req.body, "iter_time_s", 0, 1e-6, 1e6);
    if (iter_time <= 0) throw ProtoError(code::kBadField, "field 'iter_time_s': missing");
    auto job = state_.store.job(job_id);
    if (!job) throw ProtoError(code::kNotFound, "job " + std::to_string(job_id) + " is not known to colocd");
    if (!access_.may_report(who.uid) && job->uid != static_cast<std::int64_t>(who.uid))
        throw ProtoError(code::kForbidden,
                         "uid " + std::to_string(who.uid) + " may not report for job " + std::to_string(job_id));
    const place::RunningJob* running = state_.cluster.find(static_cast<place::JobId>(job_id));
    if (!running) throw ProtoError(code::kNotFound, "job " + std::to_string(job_id) + " is not running");
    std::vector<model::Neighbour> neighbours;
    state_.cluster.neighbours_of(*running, neighbours);
    json listed = json::array();
    for (const auto& n : neighbours)
        listed.push_back({{"profile", n.profile->name}, {"where", model::to_string(n.where)}});
    // The solo truth: what solo runs of the profile reported, else what the profile declares.
    const double solo = state_.learned.solo_iter_time(*running->profile);
    const double measured = std::max(1.0, iter_time / solo);
    const double predicted = state_.model->slowdown(*running->profile, neighbours);
    std::string params = "{}";
    if (model::Learner* learner = state_.model->learner()) {
        std::unique_ptr<model::Learner::Saved> before = learner->save();
        learner->observe(*running->profile, neighbours, measured);
        params = learner->params_json().dump();
        try {
            state_.store.record_observation(job_id, State::now_s(), iter_time, listed.dump(), state_.model->name(),
                                            params);
        } catch (...) {
            learner->restore(std::move(before));  // what is not stored is not learned
            throw;
        }
    } else {
        state_.store.record_observation(job_id, State::now_s(), iter_time, listed.dump(), state_.model->name(), params);
    }
    if (neighbours.empty()) record_solo_iter_time(*job, iter_time, State::now_s());
    ++state_.counters.observations;
    state_.metrics.observed_slowdown.observe(measured);
    const model::Prediction now = state_.model->predict(*running->profile, neighbours);
    return {{"measured_slowdown", measured},
            {"predicted_before", predicted},
            {"predicted_now", state_.model->slowdown(*running->profile, neighbours)},
            {"speed_uncertainty_now", now.uncertainty}};
}

}  // namespace coloc::daemon
