// colocd's state and request handlers: the cluster as colocd knows it, the placement engine,
// the history store, and one handler per op, dispatched from a single table that names the role
// each op needs. Handlers live by concern: launch.cpp and multinode.cpp (the plugin's reports),
// queries.cpp (colocctl's reads), learning.cpp (observe), steering_ops.cpp, reconciling.cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "daemon/metrics.hpp"
#include "daemon/reconcile_runner.hpp"
#include "daemon/service/access.hpp"
#include "daemon/service/alternatives.hpp"
#include "daemon/steering/node_writer.hpp"
#include "daemon/steering/steering.hpp"
#include "daemon/store/store.hpp"
#include "daemon/worker_pool.hpp"
#include "model/catalogue.hpp"
#include "model/elapsed_window.hpp"
#include "model/learned_profiles.hpp"
#include "model/model.hpp"
#include "place/cluster_state.hpp"
#include "place/coloc_policy.hpp"
#include "proto/auth.hpp"
#include "proto/envelope.hpp"
#include "proto/errors.hpp"
#include "proto/messages.hpp"
#include "proto/ops.hpp"
#include "slurm/job_gpus.hpp"
#include "slurm/job_slots.hpp"

namespace coloc::daemon {

// A job's GPUs on each node, as slurmctld tells them (slurm/job_gpus.hpp).
using slurm::JobGpus;
using slurm::JobGpusLookup;
using slurm::load_job_gpus;
// A job's GRES on each node, for the bind slots of a request that leaves them to colocd.
using slurm::JobGres;
using slurm::JobGresLookup;
// slurm_load_job for the slot count, after reading slurm.conf once (daemon/service/slots.cpp).
JobGres load_job_gres_for_colocd(std::int64_t job_id);

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

class Service {
public:
    // `job_gpus` asks slurmctld for a job's GPUs on each node (narrow jobs on several nodes);
    // `job_gres` for a bind job's slots on each node (the plugin leaves them to colocd).
    explicit Service(Config config, JobGpusLookup::Query job_gpus = load_job_gpus,
                     JobGresLookup::Query job_gres = load_job_gres_for_colocd);
    ~Service();

    // Handles one request's bytes and returns the reply's bytes (a round of one). Never throws.
    std::string handle(std::string_view bytes);
    // Group commit: handles the requests of one poll round with their writes in one transaction
    // and returns their replies, in order, once it has committed; each ok reply that wrote says
    // "durability": "stored". When the database cannot be written (disk full, locked,
    // read-only...) the round's writes join the store's backlog instead, what was decided stays
    // in memory, and the replies say "queued" (daemon/store/durability.cpp). When the commit
    // fails for another reason nothing of the round is acknowledged and the state in memory goes
    // back to what is stored.
    std::vector<std::string> handle_round(const std::vector<std::string_view>& requests);
    // Between rounds: stores the backlog when a retry is due.
    void retry_store();
    // On a graceful stop: a last try to store the backlog; logs what is lost. Returns the
    // records that could not be stored.
    std::size_t store_before_stop();
    // Between requests: picks up Slurm's answer for reconciliation and applies it, and starts
    // the next query when one is due (daemon/service/reconciling.cpp). Never waits for Slurm.
    void tick();
    // Reconciles with what Slurm says runs: closes what ended while colocd was away, adopts what
    // it never placed. Returns what it did; `colocctl status` shows the last one.
    struct ReconcileSummary {
        std::int64_t time = 0;        // epoch seconds of Slurm's answer, 0 = never
        std::int64_t slurm_jobs = 0;  // jobs slurmctld listed
        std::int64_t closed = 0, adopted = 0;
        std::string error;  // the last query's failure, empty when it worked
    };
    ReconcileSummary reconcile(const SlurmSnapshot& slurm);
    const ReconcileSummary& last_reconcile() const { return last_reconcile_; }
    // Between requests: a round of node steering when it is on and due; Slurm hears of it from
    // another thread, so this never waits for slurmctld.
    void steer();
    // Between requests: elastic slots, when on: reads Slurm's pending jobs (on another thread)
    // and sizes the bind nodes' gpuslot counts (daemon/service/elastic_ops.cpp).
    void size_slots();

    const Config& config() const { return cfg_; }
    Store& store() { return store_; }
    const place::ClusterState& cluster() const { return cluster_; }
    const Counters& counters() const { return counters_; }
    // What `colocctl metrics` and the HTTP endpoint show.
    MetricsSnapshot metrics() const;
    // Credential checks of one round at once, besides the serving thread's own.
    static constexpr int kOpeners = 3;

    // The route table (daemon/service/service.cpp): every op with the role it needs. dispatch
    // checks the role before the handler runs, so handlers check only what depends on the data
    // (whose job it is).
    using Handler = proto::json (Service::*)(const proto::Request&, const proto::Identity&);
    struct Route {
        proto::Op op;
        Role role;  // who may send it
        Handler handler;
        const char* action = "";            // what a refused sender "may not" do
        const char* admin_field = nullptr;  // a request naming it needs an admin (steering's switch)
    };
    static std::span<const Route> routes();
    // The role a request for `route` with this body needs.
    static Role role_for(const Route& route, const proto::json& body);

private:
    static const Route kRoutes[];
    static std::int64_t now_s();

    // A request with its envelope opened and its credential checked, ready for its handler.
    // Opening reads nothing but the configuration, so the requests of a round are opened side
    // by side (each credential check is a round trip to munged); handlers run one at a time.
    struct Opened {
        proto::Request req;
        proto::Identity who;
        const Route* route = nullptr;
        std::optional<proto::ProtoError> refused;  // set: answered with this error
        bool bad_credential = false;               // refused for its credential (auth_refused)
        double seconds = 0;                        // spent opening
    };
    Opened open(std::string_view bytes) const;
    // Refuses a request naming a cluster other than colocd.yaml's `cluster:` (wrong_cluster).
    void check_cluster(const proto::json& body) const;
    proto::json dispatch(Opened&& opened);  // the reply object, ok or error
    WorkerPool openers_{kOpeners};

    // Launch (daemon/service/launch.cpp, multinode.cpp): the plugin's reports.
    proto::json on_place(const proto::Request&, const proto::Identity&);  // place_step, and an unknown profile said
    proto::json place_step(const proto::Request&);
    proto::json on_started(const proto::Request&, const proto::Identity&);
    proto::json on_ended(const proto::Request&, const proto::Identity&);
    // A place request on its way through on_place's steps.
    struct Placing {
        proto::PlaceRequest r;
        int node = -1;  // the asking node
        std::int64_t now = 0;
        GpuMode mode = GpuMode::Bind;
        const model::JobProfile* profile = nullptr;
    };
    // One node's share of a job: its GPUs and the decision behind them.
    struct NodeChoice {
        std::vector<int> gpus;
        place::Decision decision;
    };
    Placing parse_place(const proto::Request& req) const;
    void adopt_fallbacks(const Placing& p);
    std::optional<proto::json> earlier_decision(const Placing& p);
    void resolve_how(Placing& p);
    // Bind slots the request leaves to colocd: read from Slurm (once per job) into p.r.slots;
    // the reply itself when the job holds none here (daemon/service/slots.cpp).
    std::optional<proto::json> resolve_slots(Placing& p);
    void check_step_gpus(const Placing& p) const;
    NodeChoice decide_on_node(const Placing& p);
    proto::json record_on_node(const Placing& p, const NodeChoice& choice);
    // The engine's decision, timed for coloc_decision_duration_seconds and
    // coloc_decision_cpu_seconds (apart from munge, I/O and the database).
    place::Decision decide(const place::JobRequest& request, int keep);
    // The jobs row of a job being placed now, from its place request.
    JobRow placed_job_row(const proto::PlaceRequest& r, std::int64_t now);
    // A scored candidate for explain: where, the job's slowdown, and per neighbour its slowdown
    // before and after and what it would share with the job (gpu ... link).
    void write_candidate(AlternativesWriter& out, const place::Candidate& c) const;
    // A job on several nodes: places all of them at once (daemon/service/multinode.cpp); nullopt
    // when the request is not for one (mode, one node) or is to be placed node by node. Bind
    // mode places r.slots on each node; narrow mode asks slurmctld for each node's GPUs first
    // and places within them.
    std::optional<proto::json> place_whole_bind_job(const Placing& p);
    std::optional<proto::json> place_whole_narrow_job(const Placing& p);
    // The request over all the job's nodes, or nullopt when it is to be placed node by node (part
    // of it placed already, a node colocd does not describe, one node only).
    std::optional<place::JobRequest> whole_job_request(const proto::PlaceRequest& r, const model::JobProfile& profile);
    // Stores and applies a whole-job decision; the asking node's reply.
    std::optional<proto::json> record_whole_job(const proto::PlaceRequest& r, const model::JobProfile& profile,
                                                const place::JobRequest& request, const place::Candidate& chosen,
                                                GpuMode mode, const std::string& note, std::int64_t now);

    // Queries (daemon/service/queries.cpp): what colocctl reads.
    proto::json on_status(const proto::Request&, const proto::Identity&);
    proto::json on_nodes(const proto::Request&, const proto::Identity&);
    proto::json on_jobs(const proto::Request&, const proto::Identity&);
    proto::json on_history(const proto::Request&, const proto::Identity&);
    proto::json on_explain(const proto::Request&, const proto::Identity&);
    proto::json on_metrics(const proto::Request&, const proto::Identity&);
    std::pair<std::int64_t, std::int64_t> slot_totals() const;  // GPU slots in all, in use
    proto::json job_json(const JobRow& job);

    // Learning (daemon/service/learning.cpp): observations teach the model when it learns.
    proto::json on_observe(const proto::Request&, const proto::Identity&);
    void load_learned_params();
    // Learning from ended jobs' elapsed times (daemon/service/elapsed.cpp): one window of
    // usable runs per GPU type; status shows what was used and left out.
    struct EndedJob {
        std::string gpu_type;
        model::EndedRun run;
    };
    std::optional<EndedJob> ended_run(std::int64_t job_id);
    model::ElapsedWindow& elapsed_window(const std::string& gpu_type);
    void learn_from_ended(std::int64_t job_id);
    void load_ended_runs();
    void elapsed_status(proto::json& status) const;
    struct ElapsedCounts {
        std::int64_t used = 0;
        std::map<std::string, std::int64_t> left_out;  // failed, too_short, no_solo, alone
    };
    ElapsedCounts elapsed_counts() const;  // since colocd started, the stored jobs it reloaded included
    std::map<std::string, model::ElapsedWindow> elapsed_;

    // GPU hardware (daemon/service/hardware.cpp): each node type's GPUs told to the model, and
    // what colocd.yaml or the data leave to a fallback (logged at start, shown by status).
    std::vector<std::string> init_hardware();
    void hardware_status(proto::json& status) const;

    void recover_running_jobs();
    void reload_from_store();
    // The profile a job runs with: the one it names, else the one learned for its user and
    // job name, else the default (model::LearnedProfiles).
    const model::JobProfile* profile_for(const std::string& name, const std::string& user = "",
                                         const std::string& job_name = "") const;
    // Learned profiles (daemon/service/profiles.cpp): the solo runs stored, read at start; a
    // job's figure recorded when it ran alone.
    void load_solo_runs();
    void record_solo_iter_time(const JobRow& job, double iter_time_s, std::int64_t now);
    void record_solo_runtime(std::int64_t job_id, std::int64_t now);
    proto::json on_profiles(const proto::Request&, const proto::Identity&);
    // A placement the plugin chose on its node (colocd away, or colocd's GPUs full there): recorded
    // as it is, never refused, over slots or not; a job colocd placed elsewhere on that node is
    // moved to where it runs. `uid` is the job's owner when the report names it.
    void adopt(const std::string& node, const proto::LocalPlacement& local, std::int64_t now, std::int64_t uid = -1);
    static bool same_gpus(std::vector<int> a, std::vector<int> b);
    void move_to(std::int64_t job_id, const std::string& node_name, int node, const std::vector<int>& gpus);
    void occupy(std::int64_t job_id, const model::JobProfile* profile, int node, const std::vector<int>& gpus,
                bool enforce_slots, std::int64_t since);
    void release(std::int64_t job_id, int node);
    // The job's phase slot on its shared links, chosen at its first placement (phase_slots.cpp).
    void attach_phase_slot(proto::PlaceReply& reply, const proto::PlaceRequest& r);
    // Per-job visibility (data, not a role): admins see every job, users their own.
    bool visible_to(std::int64_t job_uid, const proto::Identity& who) const;

    Config cfg_;
    Access access_;
    Store store_;
    model::ProfileCatalogue catalogue_;
    model::LearnedProfiles learned_{catalogue_};
    std::unique_ptr<model::InterferenceModel> model_;
    std::vector<std::string> hardware_notes_;
    place::ColocPolicy policy_;
    place::ClusterState cluster_;
    struct PhaseSlot {
        double offset_s = 0, period_s = 0, burst_s = 0;
        std::vector<int> links;  // topology links of the job's nodes
    };
    std::map<std::int64_t, PhaseSlot> phase_slots_;  // running jobs with bursts on a link
    Counters counters_;
    MetricsSnapshot metrics_;  // histograms and refusals by code; counters are copied in on read
    std::int64_t started_at_ = 0;
    ReconcileRunner reconciler_{cfg_.reconcile_interval_s};
    ReconcileSummary last_reconcile_;
    void reconcile_status(proto::json& status) const;
    void store_status(proto::json& status) const;
    // Node steering (daemon/service/steering_ops.cpp): the writer exists once steering was on.
    Steering steering_{make_steering(cfg_, catalogue_)};
    std::unique_ptr<SlurmNodeWriter> node_writer_;
    static Steering make_steering(const Config& cfg, const model::ProfileCatalogue& catalogue);
    proto::json on_steering(const proto::Request&, const proto::Identity&);
    void submit_to_slurm(std::vector<NodeUpdate> updates);
    proto::json steering_json() const;
    // What steering advised when a job landed, kept with its decision for explain.
    void record_steering_advice(std::int64_t decision, std::int64_t job_id, const std::string& node,
                                const model::JobProfile& profile);
    proto::json steering_advice_of(std::int64_t decision);
    // Elastic slots (daemon/service/elastic_ops.cpp): Slurm's jobs read off the request path.
    ElasticSlots elastic_{cfg_.elastic, static_cast<int>(cfg_.topology.nodes().size())};
    ReconcileRunner elastic_reader_{cfg_.elastic.interval_s};
    std::string elastic_error_;  // the last read's failure, empty when it worked
    void submit_to_slurm(std::vector<SlotUpdate> updates);
    proto::json on_elastic(const proto::Request&, const proto::Identity&);
    proto::json elastic_json() const;
    proto::json elastic_verdict_of(std::int64_t job_id, const proto::Identity& who) const;
    std::vector<int> bind_nodes() const;  // the nodes whose slots colocd sizes
    UserNames user_names_;
    // How long a narrow job's first request waits for slurmctld to tell every node's GPUs. The
    // plugin waits 250 ms for colocd by default (munge, fork and the round trip take some of it),
    // and slurmctld here answers a job lookup in under 20 ms: 100 ms leaves room for both.
    // The same 100 ms is all that one round of requests may wait for slurmctld altogether:
    // several narrow jobs arriving together must not add their waits up past the plugin's.
    static constexpr std::chrono::milliseconds kJobGpusWait{100};
    JobGpusLookup job_gpus_;
    std::chrono::microseconds job_gpus_left_{kJobGpusWait};  // reset by handle_round; slot lookups share it
    JobGresLookup job_gres_;
    std::map<std::int64_t, JobGres> job_gres_seen_;  // per job: its other nodes ask no more
};

}  // namespace coloc::daemon
