// colocd's side of elastic slots (daemon/steering/elastic_slots.hpp): reading Slurm's bind queue
// off the request path (admission's rounds read it too, admission_ops.cpp), sizing the bind
// nodes' gpuslot counts from it, the admin switch (`colocctl elastic on|off`), and the verdict
// on each pending job for explain.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <sstream>

#include "daemon/log.hpp"
#include "daemon/service/slot_sizing.hpp"
#include "proto/fields.hpp"
#include "slurm/gres_detail.hpp"
#include "slurm/hostlist.hpp"

namespace coloc::daemon {

using proto::json;
using slurm::SlurmJob;
using slurm::SlurmSnapshot;

namespace {

constexpr const char* kSlot = "gpuslot";
constexpr const char* kProfileTag = "coloc_profile=";  // etc/job_submit.lua writes it in AdminComment

// Every partition the job may run in is in bind mode (what job_submit.lua maps to slots).
bool in_bind_partitions(const Config& cfg, const std::string& partitions) {
    std::stringstream in(partitions);
    bool any = false;
    for (std::string p; std::getline(in, p, ',');) {
        if (p.empty()) continue;
        const auto it = cfg.partition_modes.find(p);
        if (it == cfg.partition_modes.end() || it->second != proto::GpuMode::Bind) return false;
        any = true;
    }
    return any;
}

// job_submit.lua's tags: coloc_gate on the jobs it gave a BeginTime for colocd to weigh,
// coloc_offer on those it gave a standing offer's node.
bool tagged(const std::string& admin_comment, const std::string& tag) {
    std::stringstream in(admin_comment);
    for (std::string word; in >> word;)
        if (word == tag) return true;
    return false;
}

// The GPU slots a job asks for on each node (its tres_per_node); 0 when none or unreadable.
int slots_per_node(const SlurmJob& j) {
    if (j.tres_per_node.empty()) return 0;
    try {
        return slurm::tres_per_node_count(j.tres_per_node, kSlot);
    } catch (const std::exception&) {
        return 0;
    }
}

std::string tagged_profile(const std::string& admin_comment) {
    if (admin_comment.rfind(kProfileTag, 0) != 0) return "";
    const std::string rest = admin_comment.substr(std::char_traits<char>::length(kProfileTag));
    return rest.substr(0, rest.find_first_of(" ,;"));
}

}  // namespace

// A job Slurm started whose launch colocd has not heard yet (a few hundred ms after its start,
// or longer for one colocd restarted beside): it takes GPUs on its nodes, which admission counts
// where the engine would place it there, as launch will.
void SlotSizing::add_started(BindQueue& q, const SlurmJob& j, std::int64_t now) const {
    const auto& topo = state_.cfg.topology;
    PendingJob p;
    p.id = j.job_id;
    p.uid = j.uid;
    p.slots_per_node = slots_per_node(j);
    for (const auto& where : j.nodes)
        if (const int n = topo.node_index(where.node); n >= 0) {
            p.allowed_nodes.push_back(n);
            if (p.slots_per_node <= 0) p.slots_per_node = where.gpu_count;
        }
    if (p.slots_per_node <= 0 || p.allowed_nodes.empty()) return;
    p.nodes = static_cast<int>(p.allowed_nodes.size());
    p.time_limit_s = static_cast<double>(j.time_limit_s);
    p.profile = profile_of(j, now);
    p.own_node_list = true;
    p.running = true;
    q.started.push_back(std::move(p));
}

const model::JobProfile* SlotSizing::profile_of(const SlurmJob& j, std::int64_t now) const {
    return state_.profile_for(tagged_profile(j.admin_comment), state_.user_names.of(j.uid, now), j.name);
}

std::vector<int> SlotSizing::bind_nodes() const {
    std::vector<int> out;
    const auto& topo = state_.cfg.topology;
    for (std::size_t n = 0; n < topo.nodes().size(); ++n) {
        if (topo.type_of(static_cast<int>(n)).slots_per_gpu < 2) continue;  // nothing to share
        const auto mode = state_.cfg.node_modes.find(topo.nodes()[n].name);
        if (mode != state_.cfg.node_modes.end() && mode->second != proto::GpuMode::Bind) continue;
        out.push_back(static_cast<int>(n));
    }
    return out;
}

void SlotSizing::submit_to_slurm(std::vector<SlotUpdate> updates) {
    if (updates.empty()) return;
    if (!node_writer_) node_writer_ = std::make_unique<SlurmNodeWriter>();
    node_writer_->submit(std::move(updates));
}

BindQueue SlotSizing::bind_queue(const SlurmSnapshot& snap, int max_pending) const {
    const auto& topo = state_.cfg.topology;
    BindQueue q;
    q.running_use.assign(topo.nodes().size(), 0);
    q.demand = submitted_;
    std::vector<std::pair<const SlurmJob*, PendingJob>> pending;
    for (const SlurmJob& j : snap.jobs) {
        if (!in_bind_partitions(state_.cfg, j.partition)) continue;
        if (j.running) {
            for (const auto& where : j.nodes)
                if (const int n = topo.node_index(where.node); n >= 0)
                    q.running_use[static_cast<std::size_t>(n)] += where.gpu_count;
            if (j.time_limit_s > 0 && j.start_time > 0)
                q.ends[static_cast<place::JobId>(j.job_id)] = static_cast<double>(j.start_time + j.time_limit_s);
            if (!state_.cluster.find(static_cast<place::JobId>(j.job_id))) add_started(q, j, snap.taken_at);
            continue;
        }
        if (!j.pending) continue;
        PendingJob p;
        p.id = j.job_id;
        p.slots_per_node = slots_per_node(j);
        if (p.slots_per_node <= 0) continue;  // asks for no GPU slot
        p.nodes = j.nodes_wanted;
        p.time_limit_s = static_cast<double>(j.time_limit_s);
        p.profile = profile_of(j, snap.taken_at);
        q.demand.queued(p.slots_per_node, p.nodes, p.time_limit_s, +1, p.profile);
        if (!j.required_nodes.empty())
            if (const auto names = slurm::expand_hostlist(j.required_nodes))
                for (const std::string& name : *names)
                    if (const int n = topo.node_index(name); n >= 0) p.allowed_nodes.push_back(n);
        p.uid = j.uid;
        p.gated = j.waits_for_begin && tagged(j.admin_comment, "coloc_gate");
        p.offered = !j.required_nodes.empty() && tagged(j.admin_comment, "coloc_offer");
        p.own_node_list = !j.required_nodes.empty() && !p.offered;
        pending.emplace_back(&j, std::move(p));
    }
    // Slurm's order: higher priority first, then earlier submission.
    std::stable_sort(pending.begin(), pending.end(), [](const auto& a, const auto& b) {
        if (a.first->priority != b.first->priority) return a.first->priority > b.first->priority;
        if (a.first->submit_time != b.first->submit_time) return a.first->submit_time < b.first->submit_time;
        return a.first->job_id < b.first->job_id;
    });
    // Only the head of the queue is weighed: a round stays short however long the queue, and
    // jobs further back start after those ahead of them anyway.
    if (pending.size() > static_cast<std::size_t>(max_pending)) pending.resize(static_cast<std::size_t>(max_pending));
    for (auto& [_, p] : pending) q.pending.push_back(std::move(p));
    return q;
}

void SlotSizing::remember_times(const SlurmSnapshot& snap) {
    const auto late = launched_between_reads(snap, slurm_times_, [this](std::int64_t id) {
        return state_.cluster.find(static_cast<place::JobId>(id)) != nullptr;
    });
    slurm_times_ = times_in(snap);
    if (late.empty()) return;
    try {
        state_.store.begin_unit();  // a full backlog refuses its first write, before anything changed
        for (const auto& [id, t] : late)
            if (const std::optional<JobRow> row = state_.store.job(id); row && (!row->submitted || !row->time_limit_s))
                state_.store.record_slurm_times(
                    id, t.submitted, t.time_limit_s > 0 ? std::optional<double>(t.time_limit_s) : std::nullopt);
    } catch (const std::exception& e) {
        log_error("job times from Slurm's queue not stored: " + std::string(e.what()));
    }
}

void SlotSizing::note_submissions(const SlurmSnapshot& snap) {
    std::set<std::int64_t> shown;
    for (const SlurmJob& j : snap.jobs) {
        if (!(j.pending || j.running) || !in_bind_partitions(state_.cfg, j.partition)) continue;
        const int per_node = slots_per_node(j);
        if (per_node <= 0) continue;
        shown.insert(j.job_id);
        if (!counted_.count(j.job_id))
            submitted_.submitted(static_cast<double>(j.submit_time > 0 ? j.submit_time : snap.taken_at), per_node,
                                 std::max(1, j.nodes_wanted), static_cast<double>(j.time_limit_s),
                                 profile_of(j, snap.taken_at));
    }
    // Ids Slurm no longer shows are let go: a job is shown from submission until it ends.
    counted_ = std::move(shown);
    submitted_.advance(static_cast<double>(snap.taken_at));  // the window's older epochs let go
}

std::optional<SlurmJobTimes> SlotSizing::slurm_times_of(std::int64_t job_id) const {
    const auto it = slurm_times_.find(job_id);
    if (it == slurm_times_.end()) return std::nullopt;
    return it->second;
}

void SlotSizing::size_slots(std::int64_t now_ms) {
    // The queue is read even with both levers off: jobs job_submit.lua gated are then released.
    const bool elastic = elastic_.enabled(), admit = admission_.enabled() && !elastic;
    std::optional<SlurmAnswer> answer = slurm_jobs_.poll(now_ms);
    if (!answer) return;
    if (!answer->ok) {
        // Nothing is renewed meanwhile: held jobs start by themselves when their leases run out.
        if (queue_error_ != answer->error) log_error((elastic ? "elastic slots: " : "admission: ") + answer->error);
        queue_error_ = answer->error;
        partners_.reset();
        return;
    }
    queue_error_.clear();
    remember_times(answer->snapshot);
    note_submissions(answer->snapshot);
    try {
        const auto& topo = state_.cfg.topology;
        const SlurmSnapshot& snap = answer->snapshot;
        BindQueue q =
            bind_queue(snap, elastic ? state_.cfg.elastic.max_pending_jobs : state_.cfg.admission.max_pending_jobs);
        const KnownEnds time(state_.cluster, static_cast<double>(snap.taken_at), std::move(q.ends));
        partners_ = q.demand.partners(time.now());
        if (!admit) {
            publish_offers(std::nullopt);
            std::vector<JobUpdate> release;
            for (const PendingJob& p : q.pending)
                if (p.gated) release.push_back({p.id, snap.taken_at, std::nullopt});
            submit_to_slurm(std::move(release));
            if (!elastic) return;
        } else {
            place::ClusterState planned(topo);
            // The jobs Slurm started that colocd has not seen launch go first: they hold their GPUs.
            std::vector<PendingJob> queue = std::move(q.started);
            queue.insert(queue.end(), q.pending.begin(), q.pending.end());
            const auto verdicts = plan_admission(state_.cluster, state_.policy, time, bind_nodes(), queue, &q.demand,
                                                 admission_.exploration(), &planned);
            submit_to_slurm(admission_.apply(verdicts, snap.taken_at));
            // Offers hold until two rounds are missed: then jobs are gated again.
            const std::int64_t expires = snap.taken_at + 2 * admission_.config().interval_s + 1;
            offers_ = standing_offers(planned, bind_nodes(), verdicts, queue);
            offers_as_of_ = snap.taken_at;
            publish_offers(offers_text(offers_, topo, snap.taken_at, expires));
            return;
        }
        const ElasticPlan plan =
            plan_elastic_slots(state_.cluster, state_.policy, time, bind_nodes(), q.running_use, q.pending);
        submit_to_slurm(elastic_.apply(plan, topo, snap.taken_at));
    } catch (const std::exception& e) {
        log_error((elastic ? "elastic slots: " : "admission: ") + std::string(e.what()));
    }
}

json SlotSizing::elastic_json() const {
    const auto& topo = state_.cfg.topology;
    json nodes = json::array();
    std::optional<SlurmNodeWriter::Status> st;
    if (node_writer_) st = node_writer_->status();
    for (int n : bind_nodes()) {
        const auto& a = elastic_.applied(n);
        if (!a) continue;
        const std::string& name = topo.nodes()[static_cast<std::size_t>(n)].name;
        json row = {{"node", name}, {"slots", *a}, {"full", full_slots(topo, n)}};
        if (st)
            if (auto it = st->admin_slots.find(name); it != st->admin_slots.end()) row["admin_slots"] = it->second;
        nodes.push_back(row);
    }
    json pending = json::array();
    for (const PendingVerdict& v : elastic_.verdicts())
        pending.push_back({{"job_id", v.id}, {"uid", v.uid}, {"node", v.node}, {"opens", v.opens}, {"why", v.why}});
    json out = {{"enabled", elastic_.enabled()},
                {"interval_s", elastic_.config().interval_s},
                {"rounds", elastic_.rounds()},
                {"updates", elastic_.updates()},
                {"last_round", elastic_.last_round_s()},
                {"nodes", nodes},
                {"pending", pending},
                {"last_error", queue_error_}};
    if (st) {
        out["slurm_updates_sent"] = st->sent;
        out["slurm_updates_failed"] = st->failed;
        if (queue_error_.empty()) out["last_error"] = st->last_error;
    }
    return out;
}

// {"op":"elastic"} reads; {"op":"elastic","enabled":true|false} switches (admins only: the route
// table's admin_field). Switching off answers once Slurm has every full count back (or after 5 s).
json SlotSizing::on_elastic(const proto::Request& req, const proto::Identity& who) {
    if (req.body.contains("enabled")) {
        const bool on = proto::get_bool_or(req.body, "enabled", false);
        if (elastic_.enabled() != on) log_info(std::string("elastic slots switched ") + (on ? "on" : "off"));
        submit_to_slurm(elastic_.set_enabled(on, state_.cfg.topology));
        if (!on && node_writer_) node_writer_->flush(5000);
    }
    json out = elastic_json();
    // A plain user sees the verdicts on their own jobs only.
    if (!access_.is_admin(who.uid)) {
        json mine = json::array();
        for (const json& v : out["pending"])
            if (access_.may_see(v["uid"].get<std::int64_t>(), who.uid)) mine.push_back(v);
        out["pending"] = mine;
    }
    return {{"elastic_slots", out}};
}

json SlotSizing::elastic_verdict_of(std::int64_t job_id, const proto::Identity& who) const {
    const PendingVerdict* v = elastic_.verdict_of(job_id);
    if (!v || !access_.may_see(v->uid, who.uid)) return nullptr;
    return {{"opens", v->opens}, {"node", v->node}, {"why", v->why}};
}

}  // namespace coloc::daemon
