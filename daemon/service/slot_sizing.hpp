// The service's slot-sizing part: how colocd steers what Slurm admits where, between requests.
//   node steering (steering_ops.cpp): each node's extra Weight and class features, from the
//     loss a probe job would meet there (daemon/steering/steering.hpp);
//   elastic slots (elastic_ops.cpp): the bind nodes' gpuslot counts, from Slurm's pending jobs
//     read off the serving thread (daemon/steering/elastic_slots.hpp);
//   admission (admission_ops.cpp), on by default in their place: when and where each pending
//     bind job starts, per job (daemon/steering/admission.hpp).
// Slurm hears of both from the node writer's thread, so none of this waits for slurmctld.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "daemon/service/access.hpp"
#include "daemon/service/background_query.hpp"
#include "daemon/service/periodic.hpp"
#include "daemon/service/slurm_times.hpp"
#include "daemon/service/state.hpp"
#include "daemon/steering/admission.hpp"
#include "daemon/steering/elastic_slots.hpp"
#include "daemon/steering/node_writer.hpp"
#include "daemon/steering/standing_offers.hpp"
#include "daemon/steering/steering.hpp"
#include "proto/auth.hpp"
#include "proto/envelope.hpp"

namespace coloc::daemon {

// The bind partitions' queue as one read of Slurm shows it.
struct BindQueue {
    std::vector<int> running_use;         // slots Slurm's running jobs hold, per node index
    std::map<place::JobId, double> ends;  // running jobs' expected ends (start + time limit)
    std::vector<PendingJob> pending;      // Slurm's order, the head only
    std::vector<PendingJob> started;      // running in Slurm, no launch heard yet (where it runs)
    place::QueueDemand demand;            // the jobs submitted over the arrival window, and the whole queue
};

class SlotSizing : public Periodic {
public:
    // Throws ConfigError naming a steering class profile the catalogue does not hold.
    SlotSizing(State& state, const Access& access);
    // Releases every job admission holds (the node writer sends it before it stops).
    ~SlotSizing() override;

    // A round of node steering when it is on and due, then elastic slots when on.
    void run_due(std::int64_t now_ms) override;

    // {"enabled": ...} switches (admins only: the route table's admin_field); both read.
    proto::json on_steering(const proto::Request& req, const proto::Identity& who);
    proto::json on_elastic(const proto::Request& req, const proto::Identity& who);
    proto::json on_admission(const proto::Request& req, const proto::Identity& who);

    bool steering_on() const { return steering_.enabled(); }
    bool elastic_on() const { return elastic_.enabled(); }
    bool admission_on() const { return admission_.enabled() && !elastic_.enabled(); }
    // What steering advises for a job landing on `node` now (JSON, kept with its decision for
    // explain); nullopt when steering is off or colocd does not describe the node.
    std::optional<std::string> advice_for(const std::string& node) const;
    // The latest elastic verdict on a job while it pended, when `who` may see it; null if none.
    proto::json elastic_verdict_of(std::int64_t job_id, const proto::Identity& who) const;
    // The latest admission verdict on a job while colocd held it, when `who` may see it; null if none.
    proto::json admission_verdict_of(std::int64_t job_id, const proto::Identity& who) const;
    // A job's times in the latest read of Slurm's queue; nullopt when that read did not hold it.
    std::optional<SlurmJobTimes> slurm_times_of(std::int64_t job_id) const;
    // Who the latest read of the bind partitions' queue showed asking for slots, for the partner
    // price of a launch's GPUs (place/partner_price.hpp); null before a read or after a failed one.
    const place::PartnerDemand* partners() const { return partners_ ? &*partners_ : nullptr; }

private:
    void steer(std::int64_t now_ms);
    void size_slots(std::int64_t now_ms);
    // Writes admission's standing offers after a round (nullopt: none hold, the file goes).
    void publish_offers(const std::optional<std::string>& text);
    void submit_to_slurm(std::vector<NodeUpdate> updates);
    void submit_to_slurm(std::vector<SlotUpdate> updates);
    void submit_to_slurm(std::vector<JobUpdate> updates);
    BindQueue bind_queue(const slurm::SlurmSnapshot& snap, int max_pending) const;
    void add_started(BindQueue& q, const slurm::SlurmJob& j, std::int64_t now) const;
    // Keeps the read's job times, and stores those of jobs launched since the read before.
    void remember_times(const slurm::SlurmSnapshot& snap);
    // Counts, once each, the bind jobs asking for GPU slots that a read shows for the first time.
    void note_submissions(const slurm::SlurmSnapshot& snap);
    proto::json admission_json() const;
    proto::json steering_json() const;
    proto::json elastic_json() const;
    std::vector<int> bind_nodes() const;  // the nodes whose slots colocd sizes
    // The profile a job Slurm shows runs with (its tag, else its user and name).
    const model::JobProfile* profile_of(const slurm::SlurmJob& j, std::int64_t now) const;

    State& state_;
    const Access& access_;
    Steering steering_;
    std::uint64_t steered_version_ = 0;  // state_.cluster_version the last round saw
    ElasticSlots elastic_;
    AdmissionGate admission_;
    BackgroundQuery slurm_jobs_;                         // for elastic slots or admission, at their interval
    std::string queue_error_;                            // the last read's failure, empty when it worked
    std::map<std::int64_t, SlurmJobTimes> slurm_times_;  // the latest read's pending and running jobs
    place::QueueDemand submitted_;                       // the jobs note_submissions counted (none queued),
                                                         // over admission.arrival_window_s
    std::set<std::int64_t> counted_;                     // of them, those the latest read showed
    std::optional<place::PartnerDemand> partners_;       // partners(): the latest read's
    std::unique_ptr<SlurmNodeWriter> node_writer_;       // exists once either was on
    bool offers_written_ = false;                        // admission.offers_file is colocd's now
    std::vector<StandingOffer> offers_;                  // the latest round's standing offers
    std::int64_t offers_as_of_ = 0;                      // and the read they rest on (0: none)
    std::string offers_error_;                           // why the latest write failed, logged once
};

}  // namespace coloc::daemon
