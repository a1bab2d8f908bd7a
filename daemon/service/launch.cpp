// The launch path: the plugin's place, started and ended reports. A place request goes through
// place()'s steps in order; a job on several nodes is placed whole in multinode.cpp.
#include <algorithm>
#include <chrono>
#include <ctime>

#include "daemon/log.hpp"
#include "daemon/service/launch.hpp"
#include "daemon/service/learning.hpp"
#include "daemon/service/slot_sizing.hpp"
#include "place/sharing_rule.hpp"
#include "proto/errors.hpp"
#include "proto/messages.hpp"
#include "proto/mode.hpp"

namespace coloc::daemon {

using proto::json;
using proto::ProtoError;
namespace code = proto::code;

namespace {

double thread_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// The plugin decides from the same inputs (proto::decide_mode): the site's mode is the node's,
// else the partition's.
proto::GpuMode resolve_mode(const Config& cfg, const proto::PlaceRequest& r) {
    std::optional<proto::GpuMode> site;
    if (auto n = cfg.node_modes.find(r.node); n != cfg.node_modes.end())
        site = n->second;
    else if (auto p = cfg.partition_modes.find(r.partition); p != cfg.partition_modes.end())
        site = p->second;
    return proto::decide_mode({.asked = r.mode,
                               .site = site,
                               .slurm_named_gpus = !r.slurm_gpus.empty(),
                               .bind_slots = r.slots > 0 || !r.slots_gres.empty(),
                               .otherwise = cfg.default_mode});
}

}  // namespace

Launch::Launch(State& state, Learning& learning, const SlotSizing& sizing, slurm::JobGpusLookup::Query job_gpus,
               slurm::JobGresLookup::Query job_gres)
    : state_(state),
      learning_(learning),
      sizing_(sizing),
      job_gpus_(std::move(job_gpus)),
      job_gres_(std::move(job_gres)) {
    recover_running_jobs();
}

// The request is decoded once; every way through place() answers with a PlaceReply.
json Launch::on_place(const proto::Request& req, const proto::Identity&) {
    Placing p = parse_place(req);  // the request, its node (known), now
    proto::PlaceReply reply = place(p);
    // A --coloc-profile colocd does not know runs as the default profile; the plugin tells the
    // user so in the job's stderr.
    reply.profile_unknown = state_.profile_unknown(p.r.profile);
    return reply.to_json();
}

proto::PlaceReply Launch::place(Placing& p) {
    adopt_fallbacks(p);                                         // what the plugin placed alone before
    if (auto earlier = earlier_decision(p)) return *earlier;    // a later step on the same node
    resolve_how(p);                                             // mode and profile
    if (auto none = resolve_slots(p)) return *none;             // bind slots from Slurm, if left to colocd
    if (auto whole = place_whole_bind_job(p)) return *whole;    // bind, several nodes: one decision
    check_step_gpus(p);                                         // Slurm's GPUs exist on the node
    if (auto whole = place_whole_narrow_job(p)) return *whole;  // narrow, several nodes: one decision
    const NodeChoice choice = decide_on_node(p);                // this node's share
    return record_on_node(p, choice);                           // stored, applied; the reply
}

Launch::Placing Launch::parse_place(const proto::Request& req) const {
    Placing p;
    p.r = proto::PlaceRequest::from_json(req.body);
    p.now = State::now_s();
    p.node = state_.cfg.topology.node_index(p.r.node);
    if (p.node < 0) throw ProtoError(code::kNotFound, "node '" + p.r.node + "' is not described in " + state_.cfg.path);
    return p;
}

void Launch::adopt_fallbacks(const Placing& p) {
    for (const auto& local : p.r.unreported) adopt(p.r.node, local, p.now);
}

std::optional<proto::PlaceReply> Launch::earlier_decision(const Placing& p) {
    for (const PlacementRow& row : state_.store.placements_of(p.r.job_id))
        if (row.node == p.r.node) {
            ++state_.counters.reused;
            proto::PlaceReply reply{.decision = row.decision,
                                    .mode = proto::parse_mode(row.mode).value_or(proto::GpuMode::Narrow),
                                    .gpus = row.gpus,
                                    .predicted_slowdown = row.predicted_slowdown,
                                    .reused = true};
            attach_phase_slot(reply, p.r);
            return reply;
        }
    return std::nullopt;
}

void Launch::resolve_how(Placing& p) {
    p.mode = resolve_mode(state_.cfg, p.r);
    p.profile = state_.profile_for(p.r.profile, state_.user_names.of(p.r.job_uid, p.now), p.r.job_name);
}

void Launch::check_step_gpus(const Placing& p) const {
    const int gpu_count = state_.cfg.topology.type_of(p.node).gpus;
    for (int g : p.r.slurm_gpus)
        if (g >= gpu_count)
            throw ProtoError(code::kBadField, "field 'slurm_gpus': GPU " + std::to_string(g) + " does not exist on " +
                                                  p.r.node + " (" + std::to_string(gpu_count) + " GPUs)");
}

Launch::NodeChoice Launch::decide_on_node(const Placing& p) {
    const proto::PlaceRequest& r = p.r;
    place::JobRequest request;
    request.id = static_cast<place::JobId>(r.job_id);
    request.profile = p.profile;
    // One node's share (single-node jobs, narrow mode, or a job placed node by node): that node only.
    request.nodes = 1;
    request.allowed_nodes = {p.node};
    // Which of the node's GPUs: the one whose slot the jobs still queued need least.
    request.partners = sizing_.partners();

    NodeChoice choice;
    place::Decision& decision = choice.decision;
    if (p.mode == proto::GpuMode::Bind) {
        if (r.slots < 1) throw ProtoError(code::kBadField, "field 'slots': bind mode needs the number of GPU slots");
        request.gpus_per_node = r.slots;
        decision = decide(request, state_.cfg.explain_candidates);
        if (!decision.placed) throw ProtoError(code::kNoCapacity, r.node + ": " + decision.reason);
        choice.gpus = decision.chosen.where.front().gpus;
    } else if (p.mode == proto::GpuMode::Narrow) {
        if (r.slurm_gpus.empty())
            throw ProtoError(code::kBadField, "field 'slurm_gpus': narrow mode needs the GPUs Slurm gave the step");
        request.gpus_per_node = narrow_gpu_count(state_.cfg, *p.profile, static_cast<int>(r.slurm_gpus.size()));
        request.allowed_gpus = r.slurm_gpus;
        decision = decide(request, state_.cfg.explain_candidates);
        if (decision.placed) {
            choice.gpus = decision.chosen.where.front().gpus;
        } else {
            // Slurm owns these GPUs whatever colocd counts; keep its choice, score it as it is.
            choice.gpus = r.slurm_gpus;
            decision.chosen = place::score_candidate(state_.cluster, *state_.model, request, {{p.node, choice.gpus}});
            decision.ranked = {decision.chosen};
        }
    } else {
        choice.gpus = r.slurm_gpus;
        request.gpus_per_node = static_cast<int>(choice.gpus.size());
        if (!choice.gpus.empty())
            decision.chosen = place::score_candidate(state_.cluster, *state_.model, request, {{p.node, choice.gpus}});
    }
    return choice;
}

proto::PlaceReply Launch::record_on_node(const Placing& p, const NodeChoice& choice) {
    const proto::PlaceRequest& r = p.r;
    const std::int64_t now = p.now;
    const std::vector<int>& gpus = choice.gpus;
    const JobRow job = placed_job_row(r, now);

    PlacementRow row{.job_id = r.job_id,
                     .node = r.node,
                     .mode = to_string(p.mode),
                     .gpus = gpus,
                     .predicted_slowdown = choice.decision.chosen.job_slowdown,
                     .created = now};
    AlternativesWriter alternatives;
    for (const auto& c : choice.decision.ranked) write_candidate(alternatives, c);
    alternatives.sharing(choice.decision.sharing);
    row.alternatives = alternatives.finish();

    const std::vector<ColocationRow> opened = opened_colocations(r, {p.node, gpus}, r.node, now);
    state_.store.record_placement(job, row, opened);  // stored or queued before anything is acknowledged
    record_steering_advice(row.decision, r.job_id, r.node);
    state_.occupy(r.job_id, p.profile, p.node, gpus, /*enforce_slots=*/p.mode == proto::GpuMode::Bind, now);
    ++state_.counters.placements;
    state_.metrics.predicted_slowdown.observe(row.predicted_slowdown);
    log_info("job " + std::to_string(r.job_id) + " on " + r.node + ": GPUs " + proto::gpu_list(gpus) + " (" + row.mode +
             ", decision " + std::to_string(row.decision) + ", predicted slowdown " +
             std::to_string(row.predicted_slowdown) + ")");
    proto::PlaceReply reply{
        .decision = row.decision, .mode = p.mode, .gpus = gpus, .predicted_slowdown = row.predicted_slowdown};
    attach_phase_slot(reply, r);
    return reply;
}

place::Decision Launch::decide(const place::JobRequest& request, int keep) {
    // The CPU clock is read outside the timed span (on this kind of host it is a system call).
    const double cpu0 = thread_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    place::Decision decision = state_.policy.place(state_.cluster, request, keep);
    // Slurm has started the job and colocd sees no queue: the rule never holds it here, but
    // explain says whether it shares and why.
    if (decision.placed && decision.sharing.empty())
        decision.sharing = place::judge_sharing(state_.cluster, request, decision.chosen, {}).why();
    state_.metrics.decision_seconds.observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    state_.metrics.decision_cpu_seconds.observe(thread_cpu_seconds() - cpu0);
    return decision;
}

json Launch::on_started(const proto::Request& req, const proto::Identity&) {
    const auto r = proto::StartedReport::from_json(req.body);
    // A local choice, reported as the job starts (so that its reports are taken at once): colocd
    // records it as it is, and moves a job it had placed elsewhere on that node.
    if (r.decision == 0 && !r.gpus.empty())
        adopt(r.node, {r.job_id, r.gpus, r.time ? r.time : State::now_s()}, State::now_s(), r.job_uid);
    state_.store.record_started(r.job_id, r.time ? r.time : State::now_s());
    return json::object();
}

json Launch::on_ended(const proto::Request& req, const proto::Identity&) {
    const auto r = proto::EndedReport::from_json(req.body);
    const std::int64_t when = r.time ? r.time : State::now_s();
    int node = state_.cfg.topology.node_index(r.node);
    bool still_elsewhere = false;
    if (const place::RunningJob* job = state_.cluster.find(static_cast<place::JobId>(r.job_id)))
        for (const auto& p : job->where)
            if (p.node != node) still_elsewhere = true;
    state_.store.record_ended(r.job_id, r.node, when, r.exit_status, r.elapsed_s, !still_elsewhere);
    if (node >= 0) state_.release(r.job_id, node);
    if (!still_elsewhere) {
        learning_.job_ended(r.job_id, State::now_s());
    }
    ++state_.counters.ended;
    return {{"known", state_.store.job(r.job_id).has_value()}};
}

JobRow Launch::placed_job_row(const proto::PlaceRequest& r, std::int64_t now) {
    JobRow row{.job_id = r.job_id,
               .uid = r.job_uid,
               .user = state_.user_names.of(r.job_uid, now),
               .job_name = r.job_name,
               .partition = r.partition,
               .profile = r.profile,
               .first_seen = now,
               .state = JobState::Placed};
    if (const std::optional<SlurmJobTimes> times = sizing_.slurm_times_of(r.job_id)) {
        row.submitted = times->submitted;
        if (times->time_limit_s > 0) row.time_limit_s = times->time_limit_s;
    }
    return row;
}

std::vector<ColocationRow> Launch::opened_colocations(const proto::PlaceRequest& r, const place::Placement& mine,
                                                      const std::string& node_name, std::int64_t now) const {
    std::vector<ColocationRow> opened;
    for (place::JobId other : state_.cluster.jobs_on_node(mine.node)) {
        if (other == static_cast<place::JobId>(r.job_id)) continue;
        const place::RunningJob& them = *state_.cluster.find(other);
        opened.push_back(
            {.job_a = r.job_id,
             .job_b = static_cast<std::int64_t>(other),
             .node = node_name,
             .sharing = model::to_string(state_.cluster.intra_node_sharing(mine, *them.on_node(mine.node))),
             .start = now});
    }
    return opened;
}

void Launch::record_steering_advice(std::int64_t decision, std::int64_t job_id, const std::string& node) {
    if (const std::optional<std::string> advice = sizing_.advice_for(node))
        state_.store.record_steering_advice(decision, job_id, node, *advice);
}

void Launch::write_candidate(AlternativesWriter& out, const place::Candidate& c) const {
    const auto& topo = state_.cfg.topology;
    out.candidate(c.job_slowdown, c.harm, c.loss);
    for (const auto& p : c.where) out.where(topo.nodes()[static_cast<std::size_t>(p.node)].name, p.gpus);
    for (const auto& e : c.effects) {
        // The tightest thing the neighbour shares with the candidate: its GPUs, island, switch or
        // node where both run, else the network link its multi-node traffic crosses.
        const char* shares = "link";
        if (const place::RunningJob* them = state_.cluster.find(e.id)) {
            std::optional<model::Sharing> tightest;
            for (const auto& p : c.where)
                if (const place::Placement* tp = them->on_node(p.node)) {
                    const model::Sharing s = state_.cluster.intra_node_sharing(p, *tp);
                    if (!tightest || s < *tightest) tightest = s;
                }
            if (tightest) shares = model::to_string(*tightest);
        }
        out.neighbour(static_cast<std::int64_t>(e.id), shares, e.before, e.after);
    }
}

}  // namespace coloc::daemon
