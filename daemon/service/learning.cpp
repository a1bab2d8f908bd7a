// Learning: a job's measured iteration time (from the job itself or a monitor) with the
// neighbours it has now teaches the model, when the model learns (model::Learner); what it
// learned is stored with the observation and loaded again at start. A report from a job
// that runs alone is its profile's solo truth (daemon/service/profiles.cpp).
#include <algorithm>

#include "daemon/log.hpp"
#include "daemon/service/service.hpp"
#include "model/learner.hpp"
#include "proto/errors.hpp"
#include "proto/fields.hpp"

namespace coloc::daemon {

using proto::json;
using proto::ProtoError;
namespace code = proto::code;

void Service::load_learned_params() {
    model::Learner* learner = model_->learner();
    if (!learner) return;
    auto saved = store_.load_model_params(model_->name());
    if (!saved) return;
    try {
        learner->load_params_json(json::parse(*saved));
        log_info("model parameters learned earlier loaded from " + cfg_.database);
    } catch (const std::exception& e) {
        log_error("ignoring the stored model parameters: " + std::string(e.what()));
    }
}

// The slowdown is measured against the profile's solo time; what the model learned is committed
// before the reply. The job's owner may report for it besides root and SlurmUser: that depends
// on the job, so it is checked here, not by the route's role.
json Service::on_observe(const proto::Request& req, const proto::Identity& who) {
    const std::int64_t job_id = proto::get_int(req.body, "job_id", 1, proto::kMaxJobId);
    const double iter_time = proto::get_number_or(req.body, "iter_time_s", 0, 1e-6, 1e6);
    if (iter_time <= 0) throw ProtoError(code::kBadField, "field 'iter_time_s': missing");
    auto job = store_.job(job_id);
    if (!job) throw ProtoError(code::kNotFound, "job " + std::to_string(job_id) + " is not known to colocd");
    if (!access_.may_report(who.uid) && job->uid != static_cast<std::int64_t>(who.uid))
        throw ProtoError(code::kForbidden,
                         "uid " + std::to_string(who.uid) + " may not report for job " + std::to_string(job_id));
    const place::RunningJob* running = cluster_.find(static_cast<place::JobId>(job_id));
    if (!running) throw ProtoError(code::kNotFound, "job " + std::to_string(job_id) + " is not running");
    std::vector<model::Neighbour> neighbours;
    cluster_.neighbours_of(*running, neighbours);
    json listed = json::array();
    for (const auto& n : neighbours)
        listed.push_back({{"profile", n.profile->name}, {"where", model::to_string(n.where)}});
    // The solo truth: what solo runs of the profile reported, else what the profile declares.
    const double solo = learned_.solo_iter_time(*running->profile);
    const double measured = std::max(1.0, iter_time / solo);
    const double predicted = model_->slowdown(*running->profile, neighbours);
    std::string params = "{}";
    if (model::Learner* learner = model_->learner()) {
        std::unique_ptr<model::Learner::Saved> before = learner->save();
        learner->observe(*running->profile, neighbours, measured);
        params = learner->params_json().dump();
        try {
            store_.record_observation(job_id, now_s(), iter_time, listed.dump(), model_->name(), params);
        } catch (...) {
            learner->restore(std::move(before));  // what is not stored is not learned
            throw;
        }
    } else {
        store_.record_observation(job_id, now_s(), iter_time, listed.dump(), model_->name(), params);
    }
    if (neighbours.empty()) record_solo_iter_time(*job, iter_time, now_s());
    ++counters_.observations;
    metrics_.observed_slowdown.observe(measured);
    const model::Prediction now = model_->predict(*running->profile, neighbours);
    return {{"measured_slowdown", measured},
            {"predicted_before", predicted},
            {"predicted_now", model_->slowdown(*running->profile, neighbours)},
            {"speed_uncertainty_now", now.uncertainty}};
}

}  // namespace coloc::daemon
