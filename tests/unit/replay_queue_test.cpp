// The Slurm-like queue: FIFO, and EASY backfill on time limits, on hand-made cases whose
// answer is worked out by hand in the comments. No interference here (the truth says 1).
#include <doctest/doctest.h>

#include "model/profile.hpp"
#include "place/coloc_policy.hpp"
#include "place/simple_policies.hpp"
#include "replay/simulator.hpp"
#include "tests/unit/pending_cluster.hpp"

using namespace coloc;
using namespace coloc::replay;

namespace {

struct NoInterference final : model::InterferenceModel {
    double slowdown(const model::JobProfile&, std::span<const model::Neighbour>) const override { return 1.0; }
    std::string name() const override { return "none"; }
};

// Two jobs on one GPU run at 1 / 1.9 each: the sharing rule holds most pairings.
struct CostlyPairs final : model::InterferenceModel {
    double slowdown(const model::JobProfile&, std::span<const model::Neighbour> neighbours) const override {
        double s = 1;
        for (const model::Neighbour& n : neighbours) s += n.where == model::Sharing::Gpu ? 0.9 : 0;
        return s;
    }
    std::string name() const override { return "costly pairs"; }
};

struct Case {
    place::Topology topo;
    model::JobProfile profile;
    std::vector<ReplayJob> jobs;

    explicit Case(int nodes = 1, int gpus = 4, int slots = 1) : topo(place::uniform_topology(nodes, gpus, slots)) {}

    void add(double submit, int gpus, double run, double limit = 0, int nodes = 1) {
        ReplayJob j;
        j.trace_id = jobs.size();
        j.submit = submit;
        j.work = run;
        j.limit = limit > 0 ? limit : run;
        j.gpus_per_node = gpus;
        j.nodes = nodes;
        j.profile = &profile;
        jobs.push_back(j);
    }

    PolicyRun run(const place::Policy& policy, place::Capacity units = place::Capacity::Idle) {
        NoInterference truth;
        return simulate(topo, policy, units, truth, jobs);
    }
};

void check_job(const PolicyRun& r, std::size_t j, double start, double end) {
    CAPTURE(j);
    CHECK(r.jobs[j].start == doctest::Approx(start));
    CHECK(r.jobs[j].end == doctest::Approx(end));
}

}  // namespace

TEST_CASE("FIFO: a job that does not fit waits, and jobs behind it wait when nothing may pass") {
    // One node, 4 GPUs. J0 takes all 4 for 10 s. J1 (2 GPUs, 5 s) waits until 10.
    Case c;
    c.add(0, 4, 10);
    c.add(1, 2, 5);
    place::ExclusivePolicy policy;
    PolicyRun r = c.run(policy);
    check_job(r, 0, 0, 10);
    check_job(r, 1, 10, 15);
    CHECK(r.backfilled == 0);
    CHECK(r.never_started == 0);
}

TEST_CASE("EASY backfill: short jobs go ahead of a blocked job when they end by its reservation") {
    // 4 GPUs. J0: 2 GPUs, 0..10. J1 (4 GPUs) is blocked: its reservation (shadow time) is 10,
    // when J0's limit frees enough, and it leaves nothing over (extra = 4 - 4 = 0).
    // J2 (2 GPUs, limit 5) at 2: 2 + 5 <= 10, so it backfills: 2..7.
    // J3 (1 GPU, limit 20) would end after 10 and there is no extra: it waits behind J1.
    // J4 (1 GPU, limit 3) at 4: nothing free; at 7 (J2 ends) 7 + 3 <= 10: backfills, 7..10.
    // At 10 J0 and J4 end, J1 starts (10..15); J3 follows at 15 (15..35).
    Case c;
    c.add(0, 2, 10);
    c.add(1, 4, 5);
    c.add(2, 2, 5);
    c.add(3, 1, 20);
    c.add(4, 1, 3);
    place::ExclusivePolicy policy;
    PolicyRun r = c.run(policy);
    check_job(r, 0, 0, 10);
    check_job(r, 1, 10, 15);
    check_job(r, 2, 2, 7);
    check_job(r, 3, 15, 35);
    check_job(r, 4, 7, 10);
    CHECK(r.backfilled == 2);
}

TEST_CASE("EASY backfill: a long job may use what the reserved job leaves over") {
    // 4 GPUs. J0: 3 GPUs, 0..10. J1 (2 GPUs) blocked at 1 with 1 free: reservation at 10,
    // when 4 will be free: 2 are extra. J2 (1 GPU, 100 s) runs past 10 but fits in the extra:
    // it starts at 2. J1 still starts at 10 (J2 holds 1 GPU, 3 are free).
    Case c;
    c.add(0, 3, 10);
    c.add(1, 2, 5);
    c.add(2, 1, 100);
    place::ExclusivePolicy policy;
    PolicyRun r = c.run(policy);
    check_job(r, 0, 0, 10);
    check_job(r, 1, 10, 15);
    check_job(r, 2, 2, 102);
}

TEST_CASE("EASY backfill plans with time limits, not with the run times it cannot know") {
    // 4 GPUs. J0: 3 GPUs, runs 5 s but asked for 10. J1 (4 GPUs) blocked: reservation at 10
    // (J0's limit). J2 (1 GPU, runs 4 s, limit 9) at 2: 2 + 9 > 10 and no extra: it may not
    // backfill, although it would have ended at 6. J0 ends at 5: J1 starts at once (5..10),
    // J2 after it (10..14).
    Case c;
    c.add(0, 3, 5, 10);
    c.add(1, 4, 5);
    c.add(2, 1, 4, 9);
    place::ExclusivePolicy policy;
    PolicyRun r = c.run(policy);
    check_job(r, 0, 0, 5);
    check_job(r, 1, 5, 10);
    check_job(r, 2, 10, 14);
    CHECK(r.backfilled == 0);
}

TEST_CASE("multi-node jobs need whole nodes' worth of GPUs on enough nodes") {
    // Two nodes of 2 GPUs. J0: 1 GPU on node 1, 0..10. J1: 2 GPUs on each of 2 nodes: waits
    // for J0 (10..20); nothing is left over then. J2: 1 GPU, limit 5, ends by 10: backfills
    // at 2 (2..7).
    Case c(2, 2, 1);
    c.add(0, 1, 10);
    c.add(1, 2, 10, 0, 2);
    c.add(2, 1, 5);
    place::ExclusivePolicy policy;
    PolicyRun r = c.run(policy);
    check_job(r, 0, 0, 10);
    check_job(r, 1, 10, 20);
    check_job(r, 2, 2, 7);
}

TEST_CASE("simultaneous ends and arrivals are one scheduling pass") {
    // J0 ends at 10 exactly when J1 arrives: J1 starts at 10, not later.
    Case c;
    c.add(0, 4, 10);
    c.add(10, 4, 1);
    place::ExclusivePolicy policy;
    PolicyRun r = c.run(policy);
    check_job(r, 1, 10, 11);
}

TEST_CASE("slots: a sharing policy starts jobs on shared GPUs that exclusive keeps waiting") {
    // One node, 2 GPUs with 2 slots each. Four 1-GPU jobs at 0: pack shares, exclusive runs two
    // and queues two.
    Case c(1, 2, 2);
    for (int i = 0; i < 4; ++i) c.add(0, 1, 10);
    place::ExclusivePolicy exclusive;
    place::PackPolicy pack;
    PolicyRun e = c.run(exclusive, place::Capacity::Idle);
    PolicyRun p = c.run(pack, place::Capacity::Open);
    int waiting_e = 0, waiting_p = 0;
    for (std::size_t i = 0; i < 4; ++i) {
        waiting_e += e.jobs[i].start > 0;
        waiting_p += p.jobs[i].start > 0;
    }
    CHECK(waiting_e == 2);
    CHECK(waiting_p == 0);
}

TEST_CASE("a head the sharing rule holds waits for idle GPUs, and jobs behind take them only as it can spare") {
    // Two nodes, 4 GPUs x 2 slots each, the coloc engine with its rule (no interference in the
    // truth). J0 takes 2 GPUs of n0 until 100, J1 3 GPUs of n1 until 1000. J2 (4 GPUs) fits at 1
    // only by sharing 2 or 3 GPUs: on n0, 89 s + 89 s against a 99-s wait, held; it waits for 4
    // idle GPUs on a node, due at 100 on n0, when 5 GPUs will be idle: 1 to spare. J3 (2 GPUs
    // until 502) would take 2 idle GPUs past 100: it waits, as colocd's admission holds it
    // (counted in free slots, 4 would be spare, and J3 would take n0's 2 idle GPUs: J2 would
    // then share at 100 rather than wait 402 s more). J4 (2 GPUs, 50 s) ends before 100: it
    // backfills. J2 runs alone on n0 from 100 to 200, then J3.
    Case c(2, 4, 2);
    c.add(0, 2, 100);
    c.add(0, 3, 1000);
    c.add(1, 4, 100);
    c.add(2, 2, 500);
    c.add(3, 2, 50);
    CostlyPairs model;
    place::ColocPolicy coloc(model);
    PolicyRun r = c.run(coloc, place::Capacity::Open);
    check_job(r, 0, 0, 100);
    check_job(r, 2, 100, 200);
    check_job(r, 4, 3, 53);
    check_job(r, 3, 200, 700);
}

namespace {

// One node, 4 GPUs x 2 slots. J0 (heavy) takes all 4 GPUs until 100. J2 (4 GPUs, heavy) would
// share all 4 with J0 at 1 (89 s + 89 s each against a 99-s wait): held, it waits for the 4 GPUs
// J0 frees at 100, none to spare. J3 (1 GPU, light, `limit`) arrives at 2. The engine's model
// (daemon::PairModel) slows a pair with a light job to 1 / 1.05 each, others to 1 / 1.9.
PolicyRun held_head_and_light_job(double limit) {
    Case c(1, 4, 2);
    model::JobProfile light;
    light.name = "light";
    c.profile.name = "heavy";
    c.add(0, 4, 100);
    c.add(1, 4, 100);
    c.add(2, 1, limit);
    c.jobs[2].profile = &light;
    daemon::PairModel model;
    place::ColocPolicy coloc(model);
    return c.run(coloc, place::Capacity::Open);
}

}  // namespace

TEST_CASE("a job behind a held head does not share a GPU the head counts on past its start") {
    // J3 (500 s) could share a GPU cheaply at 2, but would hold it past 100: J2 could then not
    // start on GPUs of its own. It waits, and shares with J2 at 100 (light: 5 % against J2's
    // 100 s left). Counting only GPUs idle now, J3 took a slot at 2.
    PolicyRun r = held_head_and_light_job(500);
    check_job(r, 0, 0, 100);
    check_job(r, 1, 100, 200);
    check_job(r, 2, 100, 600);
}

TEST_CASE("a job behind a held head that its pairing slows past the head's start counts as running past it") {
    // J3's time limit 97 s: alone it would end by 99, before J2's start at 100; sharing, the
    // model slows it to 1 / 1.05 and it runs to 2 + 97 x 1.05 = 103.85, holding a GPU J2 counts
    // on. It waits, and shares with J2 when J2 starts.
    PolicyRun r = held_head_and_light_job(97);
    check_job(r, 0, 0, 100);
    CHECK(r.jobs[1].start == doctest::Approx(100));
    CHECK(r.jobs[2].start == doctest::Approx(100));
}
