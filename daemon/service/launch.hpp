// The service's launch part: the plugin's place, started and ended reports (root or SlurmUser
// only, as the route table says).
//   launch.cpp: a place request's steps, in order (Launch::place), and started and ended;
//   multinode.cpp: a job on several nodes placed whole, in one decision;
//   slots.cpp: a bind job's slots, read from slurmctld when the plugin leaves them to colocd;
//   phase_slots.cpp: a job's iteration offset on the links it shares;
//   adopt.cpp: what the plugin placed on its own, recorded as it is, and the jobs that were
//     running when colocd started.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/service/alternatives.hpp"
#include "daemon/service/state.hpp"
#include "proto/auth.hpp"
#include "proto/envelope.hpp"
#include "proto/messages.hpp"
#include "slurm/job_gpus.hpp"
#include "slurm/job_slots.hpp"

namespace coloc::daemon {

class Learning;
class SlotSizing;

// slurm_load_job for a bind job's slot count, after reading slurm.conf once.
slurm::JobGres load_job_gres_for_colocd(std::int64_t job_id);

class Launch {
public:
    // `job_gpus` asks slurmctld for a job's GPUs on each node (narrow jobs on several nodes);
    // `job_gres` for a bind job's slots on each node (the plugin leaves them to colocd).
    // `learning` hears of the jobs that end; `sizing` says what steering advised.
    Launch(State& state, Learning& learning, const SlotSizing& sizing, slurm::JobGpusLookup::Query job_gpus,
           slurm::JobGresLookup::Query job_gres);

    proto::json on_place(const proto::Request& req, const proto::Identity& who);
    proto::json on_started(const proto::Request& req, const proto::Identity& who);
    proto::json on_ended(const proto::Request& req, const proto::Identity& who);

    // A new round of requests: the time it may wait for slurmctld starts afresh.
    void start_round() { slurmctld_left_ = kSlurmctldWait; }
    // The placements the store holds open are the cluster's running jobs (at start, and when
    // a failed commit leaves memory behind the store).
    void recover_running_jobs();

    // How long a narrow job's first request waits for slurmctld to tell every node's GPUs. The
    // plugin waits 250 ms for colocd by default (munge, fork and the round trip take some of
    // it), and slurmctld here answers a job lookup in under 20 ms: 100 ms leaves room for both.
    // The same 100 ms is all that one round of requests may wait for slurmctld altogether:
    // several narrow jobs arriving together must not add their waits up past the plugin's.
    static constexpr std::chrono::milliseconds kSlurmctldWait{100};

private:
    // A place request on its way through place()'s steps.
    struct Placing {
        proto::PlaceRequest r;
        int node = -1;  // the asking node
        std::int64_t now = 0;
        proto::GpuMode mode = proto::GpuMode::Bind;
        const model::JobProfile* profile = nullptr;
    };
    // One node's share of a job: its GPUs and the decision behind them.
    struct NodeChoice {
        std::vector<int> gpus;
        place::Decision decision;
    };
    proto::PlaceReply place(Placing& p);
    Placing parse_place(const proto::Request& req) const;
    void adopt_fallbacks(const Placing& p);
    std::optional<proto::PlaceReply> earlier_decision(const Placing& p);
    void resolve_how(Placing& p);
    // Bind slots the request leaves to colocd: read from Slurm (once per job) into p.r.slots;
    // the reply itself when the job holds none here.
    std::optional<proto::PlaceReply> resolve_slots(Placing& p);
    void check_step_gpus(const Placing& p) const;
    NodeChoice decide_on_node(const Placing& p);
    proto::PlaceReply record_on_node(const Placing& p, const NodeChoice& choice);
    // The engine's decision, timed for coloc_decision_duration_seconds and
    // coloc_decision_cpu_seconds (apart from munge, I/O and the database).
    place::Decision decide(const place::JobRequest& request, int keep);
    // The jobs row of a job being placed now, from its place request.
    JobRow placed_job_row(const proto::PlaceRequest& r, std::int64_t now);
    // A scored candidate for explain: where, the job's slowdown, and per neighbour its slowdown
    // before and after and what it would share with the job (gpu ... link).
    void write_candidate(AlternativesWriter& out, const place::Candidate& c) const;
    // Who a job placed on `node` now shares something with, from now on.
    std::vector<ColocationRow> opened_colocations(const proto::PlaceRequest& r, const place::Placement& mine,
                                                  const std::string& node_name, std::int64_t now) const;
    // What steering advised when the job landed, kept with its decision for explain.
    void record_steering_advice(std::int64_t decision, std::int64_t job_id, const std::string& node);

    // A job on several nodes: places all of them at once (multinode.cpp); nullopt when the
    // request is not for one (mode, one node) or is to be placed node by node. Bind mode places
    // r.slots on each node; narrow mode asks slurmctld for each node's GPUs first and places
    // within them.
    std::optional<proto::PlaceReply> place_whole_bind_job(const Placing& p);
    std::optional<proto::PlaceReply> place_whole_narrow_job(const Placing& p);
    // The request over all the job's nodes, or nullopt when it is to be placed node by node (part
    // of it placed already, a node colocd does not describe, one node only).
    std::optional<place::JobRequest> whole_job_request(const proto::PlaceRequest& r, const model::JobProfile& profile);
    // Stores and applies a whole-job decision; the asking node's reply.
    std::optional<proto::PlaceReply> record_whole_job(const proto::PlaceRequest& r, const model::JobProfile& profile,
                                                      const place::JobRequest& request, const place::Candidate& chosen,
                                                      proto::GpuMode mode, const std::string& note, std::int64_t now);

    // A placement the plugin chose on its node (colocd away, or colocd's GPUs full there):
    // recorded as it is, never refused, over slots or not; a job colocd placed elsewhere on that
    // node is moved to where it runs. `uid` is the job's owner when the report names it.
    void adopt(const std::string& node, const proto::LocalPlacement& local, std::int64_t now, std::int64_t uid = -1);
    void move_to(std::int64_t job_id, const std::string& node_name, int node, const std::vector<int>& gpus);

    // The job's phase slot on its shared links, chosen at its first placement (phase_slots.cpp).
    void attach_phase_slot(proto::PlaceReply& reply, const proto::PlaceRequest& r);
    struct PhaseSlot {
        double offset_s = 0, period_s = 0, burst_s = 0;
        std::vector<int> links;  // topology links of the job's nodes
    };

    State& state_;
    Learning& learning_;
    const SlotSizing& sizing_;
    std::map<std::int64_t, PhaseSlot> phase_slots_;  // running jobs with bursts on a link
    slurm::JobGpusLookup job_gpus_;
    slurm::JobGresLookup job_gres_;
    std::chrono::microseconds slurmctld_left_{kSlurmctldWait};  // this round's; both lookups share it
    std::map<std::int64_t, slurm::JobGres> job_gres_seen_;      // per job: its other nodes ask no more
};

}  // namespace coloc::daemon
