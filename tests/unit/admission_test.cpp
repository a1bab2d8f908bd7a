// Admission on hand-made cases whose answer is known (the pair model of pending_cluster.hpp):
// which gated jobs are released, to which node, and what the gate sends Slurm between rounds.
#include <doctest/doctest.h>

#include "config/config.hpp"
#include "daemon/steering/admission.hpp"
#include "daemon/steering/elastic_slots.hpp"
#include "tests/unit/pending_cluster.hpp"

using namespace coloc;
using namespace coloc::daemon;

namespace {

struct Cluster : PendingCluster {
    using PendingCluster::PendingCluster;
    PendingJob gated(std::int64_t id, const model::JobProfile& p, double limit_s, int slots = 1) const {
        PendingJob j = pending(id, p, limit_s, slots);
        j.gated = true;
        return j;
    }
    std::vector<AdmissionVerdict> plan(const std::vector<PendingJob>& queue) const {
        const KnownEnds time(state, 0, ends);
        std::vector<int> nodes;
        for (int n = 0; n < static_cast<int>(topo.nodes().size()); ++n) nodes.push_back(n);
        return plan_admission(state, policy, time, nodes, queue);
    }
};

// What the replay's engine decides for `job` with the outlook the replay would build.
place::Decision replay_decision(const Cluster& c, const PendingJob& job, const place::QueueDemand& demand) {
    const KnownEnds time(c.state, 0, c.ends);
    const place::SharingOutlook outlook{.time = &time,
                                        .work_s = job.time_limit_s,
                                        .gpus_ahead = 0,
                                        .ahead_gpu_s = 0,
                                        .others_waiting = 0,
                                        .arrivals = demand.rates(0),
                                        .head = {},
                                        .exploration = nullptr,
                                        .nodes_wanted = &demand.nodes_wanted()};
    place::JobRequest r;
    r.profile = job.profile;
    r.gpus_per_node = job.slots_per_node;
    r.outlook = &outlook;
    return c.policy.place(c.state, r);
}

AdmissionConfig config(int lease_s = 60, int cap = 64) {
    AdmissionConfig c;
    c.lease_s = lease_s;
    c.max_updates_per_round = cap;
    return c;
}

}  // namespace

TEST_CASE("admission: a pairing that loses more than the wait is held, a good one behind it shares") {
    Cluster c;
    c.run(1, 0, 100);
    c.run(2, 1, 100);
    // heavy: 90 s + 90 s against a 100 s wait; light: 5 s + 5 s.
    const auto v = c.plan({c.gated(10, c.heavy, 1000), c.gated(11, c.light, 1000)});
    REQUIRE(v.size() == 2);
    CHECK_FALSE(v[0].release);
    CHECK(v[0].why.find("held") == 0);
    CHECK(v[1].release);
    CHECK(v[1].node == "n1");
}

TEST_CASE("admission: a job released in a round stands on the cluster for the jobs behind it") {
    Cluster c;
    c.run(1, 0, 100);
    // The first heavy job takes the idle GPU; the second would share with a heavy job then.
    const auto v = c.plan({c.gated(10, c.heavy, 1000), c.gated(11, c.heavy, 1000)});
    REQUIRE(v.size() == 2);
    CHECK(v[0].release);
    CHECK(v[0].why.find("GPUs of its own") != std::string::npos);
    CHECK_FALSE(v[1].release);
}

TEST_CASE("admission: a job Slurm starts first (not gated) takes its place before the gated ones") {
    Cluster c;
    c.run(1, 0, 100);
    PendingJob first = c.pending(9, c.heavy, 1000);  // job_submit.lua did not gate it
    const auto v = c.plan({first, c.gated(10, c.heavy, 1000)});
    REQUIRE(v.size() == 2);
    CHECK_FALSE(v[0].gated);
    CHECK_FALSE(v[1].release);  // the idle GPU went to job 9
}

TEST_CASE("admission: a job in Slurm's hands takes its slot even where the rule would hold it") {
    Cluster c;
    c.run(1, 0, 100);
    c.run(2, 1, 100);
    c.run(3, 1, 100);  // GPU 1 full; GPU 0's second slot is the only one free
    // Job 9 is no longer gated (colocd released it in an earlier round, or job_submit.lua let it
    // pass): Slurm starts it in that slot, although the rule would hold it (90 + 90 s > 100 s).
    const auto v = c.plan({c.pending(9, c.heavy, 1000), c.gated(10, c.light, 1000)});
    REQUIRE(v.size() == 2);
    CHECK_FALSE(v[0].gated);
    // So the light job, which would share that slot at a small price, has no place left.
    CHECK_FALSE(v[1].release);
    CHECK(v[1].why.find("no place") != std::string::npos);
}

TEST_CASE("admission: a job behind a held one gets GPUs of its own only if it ends before they are due") {
    Cluster c;
    c.run(1, 0, 100);  // GPU 1 idle; GPU 0 frees at 100 s
    // Job 10 wants both GPUs: one would be shared with a heavy job for 90 + 90 s > its 100 s wait.
    const auto longer = c.plan({c.gated(10, c.heavy, 1000, 2), c.gated(11, c.heavy, 1000)});
    REQUIRE(longer.size() == 2);
    CHECK_FALSE(longer[0].release);
    CHECK_FALSE(longer[1].release);
    CHECK(longer[1].why.find("job 10 ahead of it waits for") != std::string::npos);
    const auto shorter = c.plan({c.gated(10, c.heavy, 1000, 2), c.gated(11, c.heavy, 50)});
    CHECK_FALSE(shorter[0].release);
    CHECK(shorter[1].release);  // it ends (50 s) before job 10's GPUs are due (100 s): backfill
}

TEST_CASE("admission: sharing that delays the first held job is priced for the job behind it") {
    Cluster c;
    c.run(1, 0, 100);  // GPU 0 frees at 100 s
    c.run(2, 1, 100);  // GPU 1 too
    // Job 10 wants both GPUs and is held (each shared with a heavy job: 90 s + 90 s each) until
    // 100 s. A light job behind it, done by then, shares and slows a neighbour that ends at
    // 100 s by 5 %: that one ends 5 s late, and job 10 starts 5 s late.
    const auto v = c.plan({c.gated(10, c.heavy, 1000, 2), c.gated(11, c.light, 100)});
    REQUIRE(v.size() == 2);
    CHECK_FALSE(v[0].release);
    CHECK(v[1].why.find("5 s to the first queued job") != std::string::npos);
}

TEST_CASE("admission: a job that would share a GPU a held one waits for, past its start, is held") {
    Cluster c;
    c.run(1, 0, 100);  // GPU 0 frees at 100 s
    c.run(2, 1, 100);  // GPU 1 too
    // Job 10 waits for both GPUs, due at 100 s. A light job sharing either for 1000 s would still
    // hold it then: job 10 would wait 900 s more, far past the 5 s the slowdown alone costs.
    const auto v = c.plan({c.gated(10, c.heavy, 1000, 2), c.gated(11, c.light, 1000)});
    REQUIRE(v.size() == 2);
    CHECK_FALSE(v[0].release);
    CHECK_FALSE(v[1].release);
    CHECK(v[1].why.find("job 10 ahead of it waits for") != std::string::npos);
    // With one GPU wanted, the other GPU due at 100 s is enough for job 10: the light job shares.
    const auto one = c.plan({c.gated(10, c.heavy, 1000), c.gated(11, c.light, 1000)});
    CHECK_FALSE(one[0].release);
    CHECK(one[1].release);
}

// Every pair on one GPU predicted at 0.8 speed each, with a standard deviation of 0.2.
class UncertainPairs final : public model::InterferenceModel {
public:
    double slowdown(const model::JobProfile&, std::span<const model::Neighbour> neighbours) const override {
        return 1 + 0.25 * shared(neighbours);
    }
    model::Prediction predict(const model::JobProfile& job,
                              std::span<const model::Neighbour> neighbours) const override {
        return {1 / slowdown(job, neighbours), shared(neighbours) > 0 ? 0.2 : 0.0};
    }
    std::string name() const override { return "uncertain pairs"; }

private:
    static int shared(std::span<const model::Neighbour> neighbours) {
        int n = 0;
        for (const model::Neighbour& x : neighbours) n += x.where == model::Sharing::Gpu;
        return n;
    }
};

TEST_CASE("admission: exploration releases a pairing only the margin holds, within explore_share") {
    Cluster c;
    c.run(1, 0, 1000);
    c.run(2, 1, 1000);
    // Predicted: 250 s + 250 s against a 1000 s wait; at 0.6 each (one deviation slower), 667 s
    // + 667 s: held by the margin, and what it may lose (333 s) is less than its expected gain.
    UncertainPairs uncertain;
    const place::ColocPolicy policy(uncertain);
    const KnownEnds time(c.state, 0, c.ends);
    const std::vector<int> nodes = {0};
    const std::vector<PendingJob> queue = {c.gated(10, c.heavy, 1000)};
    AdmissionConfig off = config();
    CHECK(AdmissionGate(off).exploration() == nullptr);  // the default: never
    CHECK_FALSE(plan_admission(c.state, policy, time, nodes, queue)[0].release);
    AdmissionConfig half = config();
    half.explore_share = 0.5;
    AdmissionGate gate(half);
    // At most half the decisions weighed, kept across rounds: the first round holds it.
    auto v = plan_admission(c.state, policy, time, nodes, queue, nullptr, gate.exploration());
    CHECK_FALSE(v[0].release);
    CHECK(v[0].why.find("margin") != std::string::npos);
    v = plan_admission(c.state, policy, time, nodes, queue, nullptr, gate.exploration());
    REQUIRE(v[0].release);
    CHECK(v[0].explores);
    CHECK(v[0].why.find("shares, exploring:") != std::string::npos);
    CHECK(gate.exploration_account().weighed == 2);
    CHECK(gate.exploration_account().explored == 1);
    CHECK_FALSE(plan_admission(c.state, policy, time, nodes, queue, nullptr, gate.exploration())[0].release);
}

TEST_CASE("admission: the engine's node reaches Slurm, unless the user named nodes") {
    Cluster c(2);
    c.run(1, 0, 100, 0);
    c.run(2, 1, 100, 0);  // n1 full, n2 idle
    PendingJob mine = c.gated(11, c.heavy, 1000);
    mine.own_node_list = true;
    const auto v = c.plan({c.gated(10, c.heavy, 1000), mine});
    REQUIRE(v.size() == 2);
    CHECK(v[0].release);
    CHECK(v[0].node == "n2");
    CHECK(v[1].release);
    CHECK(v[1].node.empty());
}

TEST_CASE("admission: jobs the rule cannot weigh are released at once") {
    Cluster c;
    c.run(1, 0, 100);
    c.run(2, 1, 100);
    PendingJob wide = c.gated(10, c.heavy, 1000);
    wide.nodes = 2;
    const auto v = c.plan({wide, c.gated(11, c.heavy, 0)});
    REQUIRE(v.size() == 2);
    CHECK(v[0].release);
    CHECK(v[1].release);
    CHECK(v[1].why.find("no time limit") != std::string::npos);
}

TEST_CASE("admission gate: releases now, renews a lease only when half of it is gone") {
    AdmissionGate gate(config(60));
    std::vector<AdmissionVerdict> round = {
        {.id = 10, .uid = 1, .gated = true, .release = false, .node = "", .why = "held"},
        {.id = 11, .uid = 1, .gated = true, .release = true, .node = "n2", .why = ""}};
    auto u = gate.apply(round, 1000);
    REQUIRE(u.size() == 2);
    CHECK(u[0].job == 11);  // releases first
    CHECK(u[0].begin == 1000);
    CHECK(u[0].nodes == std::optional<std::string>("n2"));
    CHECK(u[1].job == 10);
    CHECK(u[1].begin == 1060);
    CHECK_FALSE(u[1].nodes);
    CHECK(gate.held() == 1);
    round.pop_back();
    CHECK(gate.apply(round, 1020).empty());  // 40 s of its lease left
    u = gate.apply(round, 1031);             // 29 s left: renewed
    REQUIRE(u.size() == 1);
    CHECK(u[0].begin == 1091);
    // Gone from the queue (started, cancelled): forgotten.
    CHECK(gate.apply({}, 1040).empty());
    CHECK(gate.held() == 0);
}

TEST_CASE("admission gate: a job given a node and still pending a lease later gets its node list cleared") {
    AdmissionGate gate(config(60));
    gate.apply({{.id = 11, .uid = 1, .gated = true, .release = true, .node = "n2", .why = ""}}, 1000);
    const AdmissionVerdict pending{.id = 11, .uid = 1, .gated = false, .release = false, .node = "", .why = ""};
    CHECK(gate.apply({pending}, 1030).empty());
    const auto u = gate.apply({pending}, 1060);
    REQUIRE(u.size() == 1);
    CHECK(u[0].nodes == std::optional<std::string>(""));
    CHECK(gate.apply({pending}, 1200).empty());  // once
}

TEST_CASE("admission gate: switching off, or stopping, releases every held job") {
    AdmissionGate gate(config(60));
    gate.apply({{.id = 10, .uid = 1, .gated = true, .release = false, .node = "", .why = "held"},
                {.id = 12, .uid = 1, .gated = true, .release = false, .node = "", .why = "held"}},
               1000);
    const auto u = gate.set_enabled(false, 1010);
    REQUIRE(u.size() == 2);
    for (const JobUpdate& j : u) CHECK(j.begin == 1010);
    CHECK(gate.held() == 0);
    CHECK(gate.apply({{.id = 10, .uid = 1, .gated = true, .release = false, .node = "", .why = "held"}}, 1020).empty());
}

TEST_CASE("admission gate: at most max_updates_per_round, the rest at the next round") {
    AdmissionGate gate(config(60, 1));
    const std::vector<AdmissionVerdict> round = {
        {.id = 10, .uid = 1, .gated = true, .release = false, .node = "", .why = "held"},
        {.id = 11, .uid = 1, .gated = true, .release = false, .node = "", .why = "held"}};
    auto u = gate.apply(round, 1000);
    REQUIRE(u.size() == 1);
    CHECK(u[0].job == 10);
    u = gate.apply(round, 1002);
    REQUIRE(u.size() == 1);
    CHECK(u[0].job == 11);  // job 10's lease is fresh; job 11's was never sent
}

TEST_CASE("admission: colocd.yaml, on by default") {
    const std::string base =
        "node_types:\n  quad: { gpus: 4, slots_per_gpu: 2 }\nnodes:\n  - { names: n1, type: quad }\n";
    const Config d = parse_config(base, "t");
    CHECK(d.admission.enabled);
    CHECK(d.admission.lease_s >= 2 * d.admission.interval_s);
    CHECK_FALSE(parse_config(base + "admission: off\n", "t").admission.enabled);
    const Config c = parse_config(base + "admission: { interval_s: 1, lease_s: 10 }\n", "t");
    CHECK(c.admission.interval_s == 1);
    CHECK(c.admission.lease_s == 10);
    CHECK(d.admission.watch_ms > 0);  // watched by default
    CHECK(parse_config(base + "admission: { watch_ms: 0 }\n", "t").admission.watch_ms == 0);
    CHECK(d.admission.explore_share == 0);
    CHECK(parse_config(base + "admission: { explore_share: 0.05 }\n", "t").admission.explore_share == 0.05);
    CHECK_THROWS_WITH_AS(parse_config(base + "admission: { explore_share: 2 }\n", "t"),
                         doctest::Contains("admission.explore_share"), ConfigError);
    CHECK_THROWS_WITH_AS(parse_config(base + "admission: { watch_ms: -5 }\n", "t"),
                         doctest::Contains("admission.watch_ms"), ConfigError);
    CHECK_THROWS_WITH_AS(parse_config(base + "admission: { interval_s: 10, lease_s: 15 }\n", "t"),
                         doctest::Contains("less than two intervals"), ConfigError);
    CHECK_THROWS_WITH_AS(parse_config(base + "admission: { leases: 10 }\n", "t"), doctest::Contains("admission"),
                         ConfigError);
    // Standing offers where etc/job_submit.lua reads them, unless told otherwise.
    CHECK(d.admission.offers_file == "/run/coloc/offers");
    CHECK(parse_config(base + "admission: { offers_file: '' }\n", "t").admission.offers_file.empty());
    CHECK_THROWS_WITH_AS(parse_config(base + "admission: { offers_file: run/offers }\n", "t"),
                         doctest::Contains("admission.offers_file"), ConfigError);
}

TEST_CASE("admission: a job none of whose nodes colocd shares is released, with no node") {
    Cluster c(2);
    c.run(1, 0, 100, 0);
    c.run(2, 1, 100, 0);
    PendingJob elsewhere = c.gated(10, c.heavy, 1000);
    elsewhere.allowed_nodes = {1};
    const KnownEnds time(c.state, 0, c.ends);
    const auto v = plan_admission(c.state, c.policy, time, {0}, {elsewhere});  // only n1 is shared
    REQUIRE(v.size() == 1);
    CHECK(v[0].release);
    CHECK(v[0].node.empty());
}

TEST_CASE("admission: a job is weighed with the arrivals and queue colocd has seen, as the replay weighs it") {
    // A heavy job on GPU 0 ends in 100 s; GPU 1 is idle. A 2-GPU heavy job would share GPU 0 and
    // hold GPU 1 at its slowed pace: at 30 s of work it costs itself and its neighbour 27 s each
    // against a 100 s wait, but takes 24 GPU-seconds more of the cluster than waiting, which
    // every job queued or to come pays. Arrivals from none to many, each round with the job
    // itself queued: colocd's verdict is the engine's with the replay's outlook every time, and
    // the arrivals turn a verdict (a weighing that ignored them could not).
    Cluster c;
    c.run(1, 0, 100);
    const KnownEnds time(c.state, 0, c.ends);
    int turned = 0;
    for (int slots : {1, 2})
        for (double limit : {30.0, 300.0}) {
            const PendingJob job = c.gated(10, c.heavy, limit, slots);
            std::optional<bool> without;
            for (int per_minute : {0, 1, 10, 100}) {
                place::QueueDemand demand;
                for (int k = 0; k < per_minute * 10; ++k)
                    demand.submitted(-600 + k * 60.0 / per_minute, slots, 1, limit);
                demand.submitted(0, slots, 1, limit);
                demand.queued(slots, 1, limit, +1);
                const auto v = plan_admission(c.state, c.policy, time, {0}, {job}, &demand);
                REQUIRE(v.size() == 1);
                const place::Decision d = replay_decision(c, job, demand);
                CAPTURE(slots);
                CAPTURE(limit);
                CAPTURE(per_minute);
                CHECK(v[0].release == d.placed);
                if (!without) without = v[0].release;
                turned += v[0].release != *without;
            }
        }
    CHECK(turned > 0);
}

TEST_CASE("admission: a job Slurm started that colocd has not seen launch holds its GPUs") {
    Cluster c;
    c.run(1, 0, 100);
    // Slurm started job 9 on the node (GPU 1 is its best place); its launch has not reached colocd.
    PendingJob started = c.pending(9, c.heavy, 1000);
    started.running = true;
    started.allowed_nodes = {0};
    const auto v = c.plan({started, c.gated(10, c.heavy, 1000)});
    // No verdict on the running job; the heavy job behind it would share with a heavy one: held.
    REQUIRE(v.size() == 1);
    CHECK(v[0].id == 10);
    CHECK_FALSE(v[0].release);
    // Without it, GPU 1 looks idle and the job is released onto it.
    CHECK(c.plan({c.gated(10, c.heavy, 1000)})[0].release);
}

TEST_CASE("admission: a job that pairs well with anyone is sent beside the job few pair well with") {
    // Node n1 runs two light jobs, node n2 two heavy ones, every GPU busy; the jobs queued behind
    // a light one are heavy. By loss alone the light job goes to n1 (a light neighbour costs the
    // same 0.05 as a heavy one, and n1 comes first), and leaves the heavy jobs' only harmless
    // slots taken. With who is asking known (the queue's classes), colocd sends it to n2, as the
    // replay's engine places it.
    Cluster c(2);
    const auto run = [&](place::JobId id, const model::JobProfile& p, int node, int gpu) {
        place::RunningJob j;
        j.id = id;
        j.profile = &p;
        j.where = {{node, {gpu}}};
        REQUIRE(c.state.add(std::move(j)));
        c.ends[id] = 1000;
    };
    run(1, c.light, 0, 0);
    run(2, c.light, 0, 1);
    run(3, c.heavy, 1, 0);
    run(4, c.heavy, 1, 1);
    const KnownEnds time(c.state, 0, c.ends);
    std::vector<PendingJob> queue{c.gated(10, c.light, 300)};
    place::QueueDemand demand;
    demand.submitted(0, 1, 1, 300, &c.light);
    demand.queued(1, 1, 300, +1, &c.light);
    for (std::int64_t id = 11; id <= 13; ++id) {
        queue.push_back(c.gated(id, c.heavy, 300));
        demand.submitted(0, 1, 1, 300, &c.heavy);
        demand.queued(1, 1, 300, +1, &c.heavy);
    }
    const auto blind = plan_admission(c.state, c.policy, time, {0, 1}, {queue.front()});
    REQUIRE(blind.size() == 1);
    CHECK(blind[0].node == "n1");
    const auto v = plan_admission(c.state, c.policy, time, {0, 1}, queue, &demand);
    REQUIRE(v.size() == queue.size());
    CHECK(v[0].release);
    CHECK(v[0].node == "n2");
    place::JobRequest r;
    r.profile = &c.light;
    r.partners = &demand.partners(0);
    place::SharingOutlook outlook;
    outlook.time = &time;
    outlook.work_s = 300;
    outlook.nodes_wanted = &demand.nodes_wanted();
    r.outlook = &outlook;
    const place::Decision d = c.policy.place(c.state, r);
    REQUIRE(d.placed);
    CHECK(d.chosen.where.front().node == 1);
    CHECK(d.chosen.partner == 0);  // the heavy job's slot is worth less to them than an idle GPU would cost
}
