// What the replay remembers of a held job (replay/held_jobs.hpp) when the model it is placed by
// learns: once the model's predictions were worked out afresh (its settled version), the held
// candidate is scored again with the model as it is now, at most once a refresh interval; a job
// it still holds stays held without a search, one it no longer holds is searched.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "place/coloc_policy.hpp"
#include "place/expected_ends.hpp"
#include "place/sharing_rule.hpp"
#include "replay/held_jobs.hpp"

using namespace coloc;
using namespace coloc::place;

namespace {

// Two jobs on one GPU each run `pair` times slower; a new `pair` is what the model learned.
class LearningPair final : public model::InterferenceModel {
public:
    double slowdown(const model::JobProfile&, std::span<const model::Neighbour> neighbours) const override {
        for (const model::Neighbour& n : neighbours)
            if (n.where == model::Sharing::Gpu) return pair_;
        return 1.0;
    }
    std::string name() const override { return "learning pair"; }
    std::uint64_t version() const override { return version_; }
    std::uint64_t settled_version() const override { return settled_; }
    // Learned, and worked out afresh (a rebuild of the model's pair tables).
    void learn(double pair) {
        step(pair);
        ++settled_;
    }
    // An online learning step: the prediction moves, the settled version stays.
    void step(double pair) {
        pair_ = pair;
        ++version_;
    }

private:
    double pair_ = 1.9;
    std::uint64_t version_ = 1, settled_ = 1;
};

// The running job ends at 100 s; time is `now`.
class Ends final : public TimeOutlook {
public:
    explicit Ends(const ClusterState& state) : index_(state) { index_.set(1, 100); }
    double wait_for_idle_gpus(int gpus) const override { return index_.wait_for_idle_gpus(now_, gpus); }
    double remaining_s(const RunningJob&) const override { return std::max(0.0, 100 - now_); }
    double now() const override { return now_; }
    double longest_wait() const override { return index_.longest_wait(now_); }
    double now_ = 0;

private:
    ExpectedEnds index_;
};

}  // namespace

TEST_CASE("held jobs: a model that learned prices the held candidate again, at most once a refresh interval") {
    const Topology topo = uniform_topology(1, 1, 2);
    ClusterState state(topo);
    model::JobProfile profile;
    profile.name = "job";
    RunningJob running;
    running.id = 1;
    running.profile = &profile;
    running.where = {{0, {0}}};
    REQUIRE(state.add(running));
    Ends ends(state);
    SharingOutlook outlook;
    outlook.time = &ends;
    outlook.work_s = 1000;
    JobRequest request;
    request.id = 7;
    request.profile = &profile;
    request.outlook = &outlook;

    LearningPair model;
    const ColocPolicy policy(model);
    replay::HeldJobs held;
    held.follow(&model, &policy, 30);
    // Beside the running job (100 s left) sharing costs 180 s against a 100-s wait: held.
    const Decision d = policy.place(state, request);
    REQUIRE(d.held);
    held.remember(7, state, d, 0);
    CHECK(held.still_turned_down(state, request, 5));

    // An online step that makes the pair cheap: not priced again until the model settles it.
    model.step(1.05);
    ends.now_ = 40;
    CHECK(held.still_turned_down(state, request, 40));
    model.step(1.9);

    // The model learns the pair is cheap (1.05: about 10 s in all), within the refresh
    // interval: the candidate is still priced as it was, held.
    held.remember(7, state, d, 0);
    model.learn(1.05);
    ends.now_ = 10;
    CHECK(held.still_turned_down(state, request, 10));
    // Past it: priced again, the cheap pairing no longer holds it, so it is searched again.
    ends.now_ = 31;
    CHECK_FALSE(held.still_turned_down(state, request, 31));

    // A model that learns the pair costs even more keeps it held, without a search.
    replay::HeldJobs again;
    again.follow(&model, &policy, 30);
    model.learn(1.9);
    ends.now_ = 0;
    const Decision d2 = policy.place(state, request);
    REQUIRE(d2.held);
    again.remember(7, state, d2, 0);
    model.learn(2.5);
    ends.now_ = 40;
    CHECK(again.still_turned_down(state, request, 40));
}
