// The sharing rule on hand-made cases whose answer is known: the baseline model slows two jobs
// on one GPU to 1.9 each, so sharing with a neighbour that has R seconds left costs the new job
// and the neighbour min(W * 1.9, R * 1.9) * (1 - 1/1.9) each, against the wait for a GPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>

#include "model/baseline.hpp"
#include "place/coloc_policy.hpp"
#include "place/sharing_rule.hpp"

using namespace coloc;
using namespace coloc::place;

namespace {

// Running jobs end at fixed times; now is 0.
class FixedEnds final : public TimeOutlook {
public:
    FixedEnds(const ClusterState& state, std::map<JobId, double> ends) : state_(state), ends_(std::move(ends)) {}
    double wait_for_idle_gpus(int gpus, double enough) const override {
        std::vector<std::pair<double, JobId>> by_end;
        for (auto [id, end] : ends_) by_end.emplace_back(end, id);
        std::sort(by_end.begin(), by_end.end());
        return wait_for_idle(state_, 0.0, gpus, enough, [&](auto&& visit) {
            for (auto [end, id] : by_end)
                if (!visit(end, *state_.find(id))) return;
        });
    }
    double remaining_s(const RunningJob& job) const override { return ends_.at(job.id); }

private:
    const ClusterState& state_;
    std::map<JobId, double> ends_;
};

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
    SharingOutlook outlook{&ends, 1000, 0};
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
    SharingOutlook outlook{&ends, 1000, 0};
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
    SharingOutlook first{&ends, 1000, 0};
    CHECK_FALSE(c.place(&first).placed);  // a GPU frees in 100 s: cheaper than any sharing
    SharingOutlook behind{&ends, 1000, 1};
    const Decision d = c.place(&behind);  // the GPU freeing at 100 s is taken by the job ahead
    REQUIRE(d.placed);
    CHECK(d.sharing.find("1 of them by jobs queued ahead") != std::string::npos);
}

TEST_CASE("sharing rule: never holds a job that gets a GPU of its own") {
    Cluster c(2);
    c.run(1, 0);
    FixedEnds ends(c.state, {{1, 1}});
    SharingOutlook outlook{&ends, 1000, 5};
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
    SharingOutlook unknown_work{&ends, 0, 0};
    CHECK(c.place(&unknown_work).placed);
    // Switched off, it shares whenever a slot is free.
    ColocOptions always;
    always.sharing_rule = false;
    SharingOutlook outlook{&ends, 1000, 0};
    const JobRequest r = c.request(&outlook);
    CHECK(ColocPolicy(c.model, always).place(c.state, r).placed);
    CHECK_FALSE(ColocPolicy(c.model).place(c.state, r).placed);
}

TEST_CASE("sharing rule: the wait counts a shared GPU as freed in part by each of its jobs") {
    Cluster c(1);
    c.run(1, 0);
    c.run(2, 0);
    FixedEnds ends(c.state, {{1, 50}, {2, 400}});
    CHECK(ends.wait_for_idle_gpus(1, 1e9) == doctest::Approx(400));
    CHECK(ends.wait_for_idle_gpus(1, 100) >= 100);  // stops looking once past what it needs to know
    CHECK(ends.wait_for_idle_gpus(2, 1e9) == std::numeric_limits<double>::infinity());
}

namespace {

// Two jobs on one GPU each run `pair` times slower (nothing else slows a job): above 2 the pair gets less done together
// than one of them alone.
class PairSlowdown final : public model::InterferenceModel {
public:
    explicit PairSlowdown(double pair) : pair_(pair) {}
    double slowdown(const model::JobProfile&, std::span<const model::Neighbour> neighbours) const override {
        for (const model::Neighbour& n : neighbours)
            if (n.where == model::Sharing::Gpu) return pair_;
        return 1.0;  // jobs on other GPUs of the node do not slow it
    }
    std::string name() const override { return "pair"; }

private:
    double pair_;
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
        SharingOutlook outlook{&ends, 1000, 0, others_waiting};
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
    SharingOutlook outlook{&ends, 1000, 0, 40};
    const SharingVerdict v = judge_sharing(c.state, c.request(&outlook), crowded.chosen, outlook);
    CHECK(v.own_extra_s == doctest::Approx(1500));
    CHECK(v.neighbours_extra_s == doctest::Approx(1500));
    CHECK(v.waiting_extra_s == doctest::Approx(40 * 500.0 / 4));
    CHECK(v.why().find("to the jobs waiting") != std::string::npos);
    // A pair that gets more done together costs those waiting nothing.
    PairSlowdown good(1.5);
    SharingOutlook many{&ends, 1000, 0, 1000};
    CHECK(ColocPolicy(good).place(c.state, c.request(&many)).placed);
}
