// The sharing rule on hand-made cases whose answer is known: the baseline model slows two jobs
// on one GPU to 1.9 each, so sharing with a neighbour that has R seconds left costs the new job
// and the neighbour min(W * 1.9, R * 1.9) * (1 - 1/1.9) each, against the wait for a GPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>

#include "model/baseline.hpp"
#include "place/coloc_policy.hpp"
#include "place/expected_ends.hpp"
#include "place/sharing_rule.hpp"

using namespace coloc;
using namespace coloc::place;

namespace {

// Running jobs end at fixed times; now is 0 unless moved on (at()).
class FixedEnds final : public TimeOutlook {
public:
    FixedEnds(const ClusterState& state, std::map<JobId, double> ends) : ends_(std::move(ends)), index_(state) {
        for (const auto& [id, end] : ends_) index_.set(id, end);
    }
    double wait_for_idle_gpus(int gpus) const override { return index_.wait_for_idle_gpus(now_, gpus); }
    double wait_for_idle_nodes(int nodes, int per_node) const override {
        return index_.wait_for_idle_nodes(now_, nodes, per_node);
    }
    double remaining_s(const RunningJob& job) const override { return std::max(0.0, ends_.at(job.id) - now_); }
    double now() const override { return now_; }
    double longest_wait() const override { return index_.longest_wait(now_); }
    void at(double now) { now_ = now; }
    // A job started (ending at `end`) or ended in the state since.
    void started(JobId id, double end) {
        ends_[id] = end;
        index_.set(id, end);
    }

private:
    std::map<JobId, double> ends_;
    ExpectedEnds index_;
    double now_ = 0;
};

// An outlook of the queue alone: no arrivals expected, no reservation ahead, no exploration.
SharingOutlook queue(const TimeOutlook* time, double work_s, int gpus_ahead, int others_waiting = 0) {
    SharingOutlook o;
    o.time = time;
    o.work_s = work_s;
    o.gpus_ahead = gpus_ahead;
    o.others_waiting = others_waiting;
    return o;
}

struct Cluster {
    Topology topo;
    ClusterState state;
    model::JobProfile profile;
    model::BaselineModel model;
    Cluster(int gpus) : topo(uniform_topology(1, gpus, 2)), state(topo) { profile.name = "job"; }
    void run(JobId id, int gpu) {
        RunningJob j;
        j.id = id;
        j.profile = &profile;
        j.where = {{0, {gpu}}};
        REQUIRE(state.add(std::move(j)));
    }
    JobRequest request(const SharingOutlook* outlook) const {
        JobRequest r;
        r.id = 99;
        r.profile = &profile;
        r.outlook = outlook;
        return r;
    }
    Decision place(const SharingOutlook* outlook) const { return ColocPolicy(model).place(state, request(outlook)); }
};

}  // namespace

TEST_CASE("sharing rule: held when a GPU of its own frees soon") {
    Cluster c(1);
    c.run(1, 0);
    FixedEnds ends(c.state, {{1, 100}});
    SharingOutlook outlook = queue(&ends, 1000, 0);
    const Decision d = c.place(&outlook);
    // Sharing costs 190 s * (1 - 1/1.9) each = 180 s; the GPU frees in 100 s.
    CHECK_FALSE(d.placed);
    CHECK(d.reason.find("sharing rule holds it") != std::string::npos);
    const SharingVerdict v = judge_sharing(c.state, c.request(&outlook), d.chosen, outlook);
    CHECK(v.shares);
    CHECK(v.hold);
    CHECK(v.own_extra_s == doctest::Approx(90));
    CHECK(v.neighbours_extra_s == doctest::Approx(90));
    CHECK(v.wait_s == doctest::Approx(100));
}

TEST_CASE("sharing rule: shares when the wait is long") {
    Cluster c(1);
    c.run(1, 0);
    FixedEnds ends(c.state, {{1, 10000}});
    SharingOutlook outlook = queue(&ends, 1000, 0);
    const Decision d = c.place(&outlook);
    // Sharing costs 1900 s * (1 - 1/1.9) each = 1800 s; the GPU frees in 10000 s.
    REQUIRE(d.placed);
    CHECK(d.sharing.rfind("shares:", 0) == 0);
}

TEST_CASE("sharing rule: the jobs queued ahead lengthen the wait") {
    Cluster c(2);
    c.run(1, 0);
    c.run(2, 1);
    FixedEnds ends(c.state, {{1, 100}, {2, 3000}});
    SharingOutlook first = queue(&ends, 1000, 0);
    CHECK_FALSE(c.place(&first).placed);  // a GPU frees in 100 s: cheaper than any sharing
    SharingOutlook behind = queue(&ends, 1000, 1);
    const Decision d = c.place(&behind);  // the GPU freeing at 100 s is taken by the job ahead
    REQUIRE(d.placed);
    CHECK(d.sharing.find("1 of them by jobs queued ahead") != std::string::npos);
}

TEST_CASE("sharing rule: never holds a job that gets a GPU of its own") {
    Cluster c(2);
    c.run(1, 0);
    FixedEnds ends(c.state, {{1, 1}});
    SharingOutlook outlook = queue(&ends, 1000, 5);
    const Decision d = c.place(&outlook);
    REQUIRE(d.placed);
    CHECK(d.chosen.where[0].gpus == std::vector<int>{1});
    CHECK(d.sharing.find("never held") != std::string::npos);
}

TEST_CASE("sharing rule: without a queue or a run time it never holds") {
    Cluster c(1);
    c.run(1, 0);
    CHECK(c.place(nullptr).placed);  // colocd: Slurm has started the job
    FixedEnds ends(c.state, {{1, 1}});
    SharingOutlook unknown_work = queue(&ends, 0, 0);
    CHECK(c.place(&unknown_work).placed);
    // Switched off, it shares whenever a slot is free.
    ColocOptions always;
    always.sharing_rule = false;
    SharingOutlook outlook = queue(&ends, 1000, 0);
    const JobRequest r = c.request(&outlook);
    CHECK(ColocPolicy(c.model, always).place(c.state, r).placed);
    CHECK_FALSE(ColocPolicy(c.model).place(c.state, r).placed);
}

TEST_CASE("sharing rule: the wait counts a shared GPU as freed in part by each of its jobs") {
    Cluster c(1);
    c.run(1, 0);
    c.run(2, 0);
    FixedEnds ends(c.state, {{1, 50}, {2, 400}});
    CHECK(ends.wait_for_idle_gpus(1) == doctest::Approx(400));
    CHECK(ends.wait_for_idle_gpus(2) == std::numeric_limits<double>::infinity());
}

namespace {

// Two jobs on one GPU each run `pair` times slower (nothing else slows a job): above 2 the pair gets less done together
// than one of them alone. `sd`: the uncertainty it gives that speed.
class PairSlowdown final : public model::InterferenceModel {
public:
    explicit PairSlowdown(double pair, double sd = 0) : pair_(pair), sd_(sd) {}
    double slowdown(const model::JobProfile&, std::span<const model::Neighbour> neighbours) const override {
        for (const model::Neighbour& n : neighbours)
            if (n.where == model::Sharing::Gpu) return pair_;
        return 1.0;  // jobs on other GPUs of the node do not slow it
    }
    model::Prediction predict(const model::JobProfile& job,
                              std::span<const model::Neighbour> neighbours) const override {
        const double s = slowdown(job, neighbours);
        return {1.0 / s, s > 1.0 ? sd_ : 0.0};
    }
    std::string name() const override { return "pair"; }

private:
    double pair_, sd_;
};

}  // namespace

TEST_CASE("sharing rule: a pair that gets less done than its neighbour alone costs every job waiting") {
    Cluster c(4);
    for (int g = 0; g < 4; ++g) c.run(static_cast<JobId>(g + 1), g);
    FixedEnds ends(c.state, {{1, 5000}, {2, 5000}, {3, 5000}, {4, 5000}});
    // Each job runs 2.5 times slower beside the other: over the 2500 s they overlap, the pair
    // does 2 x 1000 solo seconds of work where the neighbour alone did 2500.
    PairSlowdown model(2.5);
    const auto place = [&](int others_waiting) {
        SharingOutlook outlook = queue(&ends, 1000, 0, others_waiting);
        return ColocPolicy(model).place(c.state, c.request(&outlook));
    };
    // Alone in the queue: sharing costs 1500 s to the job and 1500 s to the neighbour, less
    // than the 5000 s wait.
    const Decision alone = place(0);
    REQUIRE(alone.placed);
    // With 40 jobs waiting behind it on 4 GPUs, the 500 GPU-seconds the pair loses delay each
    // of them by 125 s: 5000 s more, 8000 s in all, and sharing no longer pays.
    const Decision crowded = place(40);
    CHECK_FALSE(crowded.placed);
    SharingOutlook outlook = queue(&ends, 1000, 0, 40);
    const SharingVerdict v = judge_sharing(c.state, c.request(&outlook), crowded.chosen, outlook);
    CHECK(v.own_extra_s == doctest::Approx(1500));
    CHECK(v.neighbours_extra_s == doctest::Approx(1500));
    CHECK(v.waiting_extra_s == doctest::Approx(40 * 500.0 / 4));
    CHECK(v.why().find("to the 40 jobs waiting or to come") != std::string::npos);
    // A pair that gets more done together costs those waiting nothing.
    PairSlowdown good(1.5);
    SharingOutlook many = queue(&ends, 1000, 0, 1000);
    CHECK(ColocPolicy(good).place(c.state, c.request(&many)).placed);
}

TEST_CASE("sharing rule: a job on several GPUs holds those it does not share for the whole overlap") {
    Cluster c(4);
    c.run(1, 0);
    FixedEnds ends(c.state, {{1, 5000}});
    PairSlowdown model(2.0);
    JobRequest r = c.request(nullptr);
    r.gpus_per_node = 4;  // one GPU shared with job 1, three alone, all at the pace of the shared one
    SharingOutlook outlook = queue(&ends, 1000, 0, 8);
    r.outlook = &outlook;
    const Decision d = ColocPolicy(model).place(c.state, r);
    // Over the 2000 s overlap: job 1 runs 1000 s longer; the job holds three GPUs alone for
    // 6000 GPU-seconds and gets 4 x 1000 done: 3000 GPU-seconds lost to the 8 jobs waiting on
    // 4 GPUs, 6000 s. Counted as one GPU's work, the pair would seem to gain.
    CHECK_FALSE(d.placed);
    const SharingVerdict v = judge_sharing(c.state, r, d.chosen, outlook);
    CHECK(v.own_extra_s == doctest::Approx(1000));
    CHECK(v.neighbours_extra_s == doctest::Approx(1000));
    CHECK(v.waiting_extra_s == doctest::Approx(8 * 3000.0 / 4));
    CHECK(v.wait_s == doctest::Approx(5000));
}

TEST_CASE("sharing rule: the jobs to come count as far ahead as the queue drains") {
    Cluster c(4);
    for (int g = 0; g < 4; ++g) c.run(static_cast<JobId>(g + 1), g);
    FixedEnds ends(c.state, {{1, 5000}, {2, 5000}, {3, 5000}, {4, 5000}});
    PairSlowdown model(2.5);  // the pair loses 500 GPU-seconds (see above)
    const auto judge = [&](double offered_gpus) {
        SharingOutlook outlook = queue(&ends, 1000, 0);
        outlook.arrivals = {.jobs_per_s = 0.01, .offered_gpus = offered_gpus, .seen_s = 2000, .queued_gpu_s = 1000};
        const Decision d = ColocPolicy(model).place(c.state, c.request(&outlook));
        return std::pair{d.placed, judge_sharing(c.state, c.request(&outlook), d.chosen, outlook)};
    };
    // Half the cluster spare: the 1000 GPU-seconds queued drain in 500 s, while 5 more jobs arrive.
    const auto [spare_placed, spare] = judge(2);
    CHECK(spare.jobs_affected == doctest::Approx(5));
    CHECK(spare.waiting_extra_s == doctest::Approx(5 * 500.0 / 4));
    CHECK(spare_placed);  // 3000 s + 625 s < the 5000 s wait
    // At capacity the queue never drains: the jobs of the next 2000 s (as long as the rates
    // were seen) all wait behind the loss.
    const auto [full_placed, full] = judge(4);
    CHECK(full.jobs_affected == doctest::Approx(20));
    CHECK(full.waiting_extra_s == doctest::Approx(20 * 500.0 / 4));
    CHECK_FALSE(full_placed);  // 3000 s + 2500 s > 5000 s
    // Nothing known of arrivals: only the queue counts.
    SharingOutlook none = queue(&ends, 1000, 0);
    CHECK(judge_sharing(c.state, c.request(&none), ColocPolicy(model).place(c.state, c.request(&none)).chosen, none)
              .jobs_affected == 0);
}

TEST_CASE("sharing rule: slowing a job the first queued job waits for delays that job") {
    Cluster c(2);
    c.run(1, 0);
    c.run(2, 1);
    FixedEnds ends(c.state, {{1, 100}, {2, 3000}});
    PairSlowdown model(2.0);
    SharingOutlook behind = queue(&ends, 1000, 1);
    behind.ahead_gpu_s = 1000;
    behind.head = {.starts_in_s = 100, .gpus = 1};  // it waits for job 1's GPU
    const Decision d = ColocPolicy(model).place(c.state, c.request(&behind));
    const SharingVerdict v = judge_sharing(c.state, c.request(&behind), d.chosen, behind);
    // Beside the new job, job 1 ends 100 s later, and so starts the first queued job.
    REQUIRE(d.chosen.where[0].gpus == std::vector<int>{0});
    CHECK(v.head_delay_s == doctest::Approx(100));
    CHECK(v.why().find("100 s to the first queued job") != std::string::npos);
    // A first queued job that starts later than job 1's end with the new job is not delayed.
    SharingOutlook later = behind;
    later.head.starts_in_s = 500;
    CHECK(judge_sharing(c.state, c.request(&later), d.chosen, later).head_delay_s == 0);
}

TEST_CASE("sharing rule: jobs ahead that ask for more GPUs than the cluster has take turns") {
    Cluster c(1);
    c.run(1, 0);
    FixedEnds ends(c.state, {{1, 100}});
    // Sharing costs 90 s + 90 s; a GPU of its own after job 1 (100 s) and the 3 GPUs queued
    // ahead: they cannot all run at once on one GPU, so 3/4 of their 3000 GPU-seconds run first.
    SharingOutlook outlook = queue(&ends, 1000, 3);
    outlook.ahead_gpu_s = 3000;
    const Decision d = c.place(&outlook);
    CHECK(d.placed);
    const SharingVerdict v = judge_sharing(c.state, c.request(&outlook), d.chosen, outlook);
    CHECK(v.wait_s == doctest::Approx(100 + 3000.0 * 3 / 4));
    // Not known how long they run: the wait is the running job's end, not forever.
    SharingOutlook unknown = queue(&ends, 1000, 3);
    CHECK_FALSE(c.place(&unknown).placed);
}

TEST_CASE("sharing rule: an uncertain prediction shares only when the gain survives a pessimistic speed") {
    Cluster c(1);
    c.run(1, 0);
    FixedEnds ends(c.state, {{1, 1000}});
    // Predicted 0.8 each (cost 2 x 1250 x 0.2 = 500 s < the 1000 s wait), but one standard
    // deviation slower is 0.5 each: 2 x 2000 x 0.5 = 2000 s.
    PairSlowdown certain(1.25), uncertain(1.25, 0.3);
    SharingOutlook outlook = queue(&ends, 1000, 0);
    CHECK(ColocPolicy(certain).place(c.state, c.request(&outlook)).placed);
    const Decision held = ColocPolicy(uncertain).place(c.state, c.request(&outlook));
    REQUIRE_FALSE(held.placed);
    const SharingVerdict v = judge_sharing(c.state, c.request(&outlook), held.chosen, outlook);
    CHECK(v.expected_cost_s == doctest::Approx(500));
    CHECK(v.cost_s == doctest::Approx(2000));
    CHECK(v.why().find("margin 1500 s") != std::string::npos);
}

TEST_CASE("sharing rule: exploration tries a pairing the margin holds, within its budget") {
    Cluster c(1);
    c.run(1, 0);
    FixedEnds ends(c.state, {{1, 1000}});
    // Predicted 0.8 each: 500 s against the 1000 s wait; one standard deviation slower, 0.6 each:
    // 1333 s. It may lose 333 s, no more than the 500 s it is expected to gain.
    PairSlowdown uncertain(1.25, 0.2);
    ExplorationBudget budget{.share = 0.5};
    SharingOutlook outlook = queue(&ends, 1000, 0);
    outlook.exploration = &budget;
    const ColocPolicy policy(uncertain);
    // At most half the decisions weighed, this one included: the first is held, and counted.
    CHECK_FALSE(policy.place(c.state, c.request(&outlook)).placed);
    CHECK(budget.weighed == 1);
    CHECK(budget.explored == 0);
    const Decision second = policy.place(c.state, c.request(&outlook));
    CHECK(second.placed);
    CHECK(second.sharing.rfind("shares, exploring:", 0) == 0);
    CHECK(budget.weighed == 2);
    CHECK(budget.explored == 1);
    CHECK_FALSE(policy.place(c.state, c.request(&outlook)).placed);
    CHECK(budget.explored == 1);
    // A pairing whose expected price loses too is never explored, nor one that may lose more
    // than it is expected to gain (0.5 each at the margin: 2000 s, 1000 s over the wait).
    ExplorationBudget generous{.share = 1.0};
    outlook.exploration = &generous;
    CHECK_FALSE(ColocPolicy(PairSlowdown(3.0, 0.1)).place(c.state, c.request(&outlook)).placed);
    CHECK_FALSE(ColocPolicy(PairSlowdown(1.25, 0.3)).place(c.state, c.request(&outlook)).placed);
    CHECK(generous.weighed == 2);
    CHECK(generous.explored == 0);
}

TEST_CASE("sharing rule: a job on several GPUs of a node waits for them idle on one node") {
    Cluster c(4);  // one node of 4 GPUs: two idle, two busy until 100 s and 3000 s
    c.run(1, 0);
    c.run(2, 1);
    FixedEnds ends(c.state, {{1, 100}, {2, 3000}});
    CHECK(ends.wait_for_idle_nodes(1, 2) == 0);
    CHECK(ends.wait_for_idle_nodes(1, 3) == doctest::Approx(100));
    CHECK(ends.wait_for_idle_nodes(1, 4) == doctest::Approx(3000));
    CHECK(ends.wait_for_idle_nodes(2, 1) == std::numeric_limits<double>::infinity());  // one node only
    c.run(3, 2);
    c.run(4, 3);
    c.run(5, 3);  // GPU 3 shared: both must end for it to be idle
    FixedEnds shared(c.state, {{1, 100}, {2, 3000}, {3, 50}, {4, 10}, {5, 200}});
    CHECK(shared.wait_for_idle_nodes(1, 3) == doctest::Approx(200));
}

TEST_CASE("sharing rule: a held verdict is held for certain while its price's floor passes any wait") {
    Cluster c(2);
    c.run(1, 0);
    c.run(2, 1);
    FixedEnds ends(c.state, {{1, 100}, {2, 150}});
    SharingOutlook outlook = queue(&ends, 1000, 0);
    const JobRequest r = c.request(&outlook);
    const PairSlowdown model(1.9);  // two on a GPU run 1.9 times slower, nothing else slows them
    const Decision d = ColocPolicy(model).place(c.state, r);
    REQUIRE_FALSE(d.placed);
    // Beside job 1 (100 s left): 90 s to each, 180 s in all, against a wait of 100 s.
    HoldBound bound;
    REQUIRE(judge_sharing(c.state, r, d.chosen, outlook, &bound).hold);
    REQUIRE(bound.valid);
    CHECK(bound.own == doctest::Approx(90));
    CHECK(bound.own_rate == doctest::Approx(0.9));  // the overlap falls 1.9 s a second, 1 - 1/1.9 of it the job's
    CHECK(bound.neighbours_rate == doctest::Approx(0.9));
    CHECK(certainly_held(c.state, r, outlook, bound));  // 180 s against at most 150 s
    // 20 s on: the floor 144 s is the price itself (linear until job 1 ends); the longest wait 130 s.
    ends.at(20);
    CHECK(certainly_held(c.state, r, outlook, bound));
    CHECK(judge_sharing(c.state, r, d.chosen, outlook).cost_s == doctest::Approx(144));
    // 60 s on: the floor (72 s) no longer passes the longest wait (90 s), but it passes the wait
    // itself (40 s).
    ends.at(60);
    CHECK(certainly_held(c.state, r, outlook, bound));
    // Job 1 is past its expected end, job 2 is not: the wait is still 0 and the job still
    // held, but nothing is certain past a change where the price was read.
    c.run(3, 1);
    ends.started(3, 500);
    CHECK_FALSE(certainly_held(c.state, r, outlook, bound));
    // Weighed again into the same bound: it reads the same jobs (job 3 is on the other GPU), so its
    // reads are kept, and it is certain again from the state it was weighed in.
    REQUIRE(judge_sharing(c.state, r, d.chosen, outlook, &bound).hold);
    CHECK(bound.nodes == std::vector<int>{0});
    CHECK(certainly_held(c.state, r, outlook, bound));
    // Exploration may share what the price holds: never certain then.
    HoldBound again;
    REQUIRE(judge_sharing(c.state, r, d.chosen, outlook, &again).hold);
    CHECK(certainly_held(c.state, r, outlook, again));
    ExplorationBudget budget{.share = 0.5};
    outlook.exploration = &budget;
    CHECK_FALSE(certainly_held(c.state, r, outlook, again));
}

TEST_CASE("sharing rule: what is certainly held, weighed again, is held") {
    // Random clusters, held jobs, time moving on and jobs starting and ending: each time
    // certainly_held says so, judge_sharing says hold too.
    int certain = 0, weighed = 0;
    for (unsigned seed = 1; seed <= 40; ++seed) {
        std::mt19937 rng(seed);
        const auto uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
        Cluster c(4);
        std::map<JobId, double> end_of;
        JobId next = 1;
        for (int g = 0; g < 4; ++g)
            for (int k = 0; k < 2; ++k)
                if (uniform(0, 1) < 0.7) {
                    c.run(next, g);
                    end_of[next++] = uniform(10, 3000);
                }
        FixedEnds ends(c.state, end_of);
        PairSlowdown model(uniform(1.05, 3.0), uniform(0, 0.2));
        SharingOutlook outlook =
            queue(&ends, uniform(100, 5000), static_cast<int>(uniform(0, 6)), static_cast<int>(uniform(0, 30)));
        outlook.arrivals = {.jobs_per_s = uniform(0, 0.01),
                            .offered_gpus = uniform(0, 6),
                            .seen_s = 5000,
                            .queued_gpu_s = uniform(0, 20000)};
        const JobRequest r = c.request(&outlook);
        const Decision d = ColocPolicy(model).place(c.state, r);
        if (d.placed || !d.held) continue;
        HoldBound bound;
        if (!judge_sharing(c.state, r, d.chosen, outlook, &bound).hold) continue;
        for (double t = 0; t < 3000; t += uniform(1, 200)) {
            ends.at(t);
            if (uniform(0, 1) < 0.1 && c.state.job_count() > 0) {  // a job ends or starts somewhere
                const JobId id = c.state.jobs().begin()->first;
                c.state.remove(id);
            }
            ++weighed;
            if (!certainly_held(c.state, r, outlook, bound)) continue;
            ++certain;
            INFO("seed " << seed << " t " << t);
            CHECK(judge_sharing(c.state, r, d.chosen, outlook).hold);
        }
    }
    CHECK(certain > 100);  // the question met many held jobs
    CHECK(weighed > certain);
}
