// The engine's partner price on hand-made cases: two classes, "hog" (two hogs on one GPU run at
// 0.55 each) and "feed" (harmless to and unharmed by anyone), and a queue that asks for both.
#include <doctest/doctest.h>

#include "place/coloc_policy.hpp"
#include "place/partner_price.hpp"
#include "place/queue_demand.hpp"
#include "place/sharing_rule.hpp"

using namespace coloc;
using namespace coloc::place;

namespace {

// Hog beside hog on a GPU: 1 / 0.55 slower each; a feed costs a hog 0.1 %, a hog a feed nothing;
// two feeds nothing. Neighbours elsewhere on the node cost nothing. With `crowding`, a job with two
// or more on its GPU runs 2.5 times slower besides.
struct TwoClasses final : model::InterferenceModel {
    bool crowding = false;
    double slowdown(const model::JobProfile& job, std::span<const model::Neighbour> neighbours) const override {
        double s = 1;
        int on_gpu = 0;
        for (const model::Neighbour& n : neighbours) {
            if (n.where != model::Sharing::Gpu) continue;
            ++on_gpu;
            const bool hog = job.name == "hog", other_hog = n.profile->name == "hog";
            if (hog && other_hog) s *= 1 / 0.55;
            if (hog && !other_hog) s *= 1.001;
        }
        return crowding && on_gpu >= 2 ? 2.5 * s : s;
    }
    std::string name() const override { return "two-classes"; }
};

// What a job of the mix (2/3 hogs, 1/3 feeds) keeps of a GPU in a slot beside one feed, beside one
// hog, and on average beside one job of the mix (m); and what taking an idle GPU costs a job whose
// own slot is worth `beside`: an idle GPU offers a GPU alone and m beside, it then offers `beside`.
constexpr double kHogBesideFeed = 1 - 0.001 / 1.001;  // a hog 0.1 % slower; a feed beside a hog slows it that much
constexpr double kBesideFeed = 2.0 / 3 * kHogBesideFeed + 1.0 / 3;
constexpr double kBesideHog = 2.0 / 3 * 0.1 + 1.0 / 3 * kHogBesideFeed;  // a hog beside a hog: 1 - 0.45 - 0.45
constexpr double kNext = 2.0 / 3 * kBesideHog + 1.0 / 3 * kBesideFeed;
constexpr double idle_cost(double beside) { return 1 + kNext - beside; }

struct Cluster {
    Topology topo;
    ClusterState state;
    model::JobProfile hog, feed;
    TwoClasses model;
    PartnerDemand demand;
    JobId next = 1;
    explicit Cluster(int gpus, int slots = 2) : topo(uniform_topology(1, gpus, slots)), state(topo) {
        hog.name = "hog";
        feed.name = "feed";
        demand.mix = {{&hog, 2.0 / 3}, {&feed, 1.0 / 3}};
        demand.typical_run_s = 600;
        demand.seen_s = 3600;
    }
    void run(const model::JobProfile& p, int gpu) {
        RunningJob j;
        j.id = next++;
        j.profile = &p;
        j.where = {{0, {gpu}}};
        REQUIRE(state.add(std::move(j)));
    }
    JobRequest request(const model::JobProfile& p, bool partners = true) const {
        JobRequest r;
        r.id = 99;
        r.profile = &p;
        r.partners = partners ? &demand : nullptr;
        return r;
    }
    int gpu_for(const model::JobProfile& p, bool partners = true) const {
        const Decision d = ColocPolicy(model).place(state, request(p, partners));
        REQUIRE(d.placed);
        return d.chosen.where.front().gpus.front();
    }
};

}  // namespace

TEST_CASE("partner price: the scarcity of idle GPUs for what is queued and what arrives") {
    PartnerDemand d;
    CHECK(d.scarcity(0, 100) == 0);  // nobody is asked about: no price
    model::JobProfile p;
    d.mix = {{&p, 1.0}};
    d.queued_gpus = 5;
    CHECK(d.scarcity(4, 100) == doctest::Approx(1));  // more queued than idle
    CHECK(d.scarcity(5, 100) == 0);                   // exactly enough, and nothing arrives
    d.gpus_per_s = 0.1;
    d.seen_s = 50;
    // Arrivals over min(100 s, 50 s seen): Poisson(5) GPUs; more than 5 idle - 5 queued = 0.
    CHECK(d.scarcity(5, 100) == doctest::Approx(poisson_at_least(5, 1)));
    CHECK(d.scarcity(500, 100) < 1e-9);  // idle GPUs plenty
}

TEST_CASE("partner price: a job that pairs well with all goes beside the job few pair well with") {
    Cluster c(2);
    c.run(c.feed, 0);
    c.run(c.hog, 1);
    c.demand.queued_gpus = 10;  // no idle GPU and a queue: every slot is wanted
    // By loss alone the feed goes beside the feed (nothing lost), and leaves the hog's slot, which
    // only a feed could use, empty while the hogs queued cannot pair with anyone else.
    CHECK(c.gpu_for(c.feed, false) == 0);
    CHECK(c.gpu_for(c.feed) == 1);
    // A hog goes beside the feed either way: beside a hog it loses far more than the price.
    CHECK(c.gpu_for(c.hog, false) == 0);
    CHECK(c.gpu_for(c.hog) == 0);
    // The price is what the slot is worth to the mix beyond what an idle GPU would cost the feed:
    // the slot beside the feed is worth more, the one beside the hog less (nothing is charged).
    const JobRequest price_request = c.request(c.feed);
    PartnerPrice price(c.state, c.model, price_request, nullptr);
    REQUIRE(price.any());
    CHECK(price.of(0, {0}) == doctest::Approx(kBesideFeed - idle_cost(kBesideFeed)));
    CHECK(price.of(0, {1}) == 0);
    CHECK(kBesideHog < idle_cost(kBesideFeed));
}

TEST_CASE("partner price: nothing is charged for GPUs of its own, nor when idle GPUs are plenty") {
    Cluster c(4);
    c.run(c.feed, 0);
    c.run(c.hog, 1);
    // Two idle GPUs, no queue, no arrivals: no slot is wanted, loss alone decides.
    const JobRequest none_request = c.request(c.feed);
    PartnerPrice none(c.state, c.model, none_request, nullptr);
    CHECK_FALSE(none.any());
    CHECK(none.of(0, {0}) == 0);
    CHECK(c.gpu_for(c.feed) == 0);
    // A queue longer than the idle GPUs: the shared slots are priced, the idle GPUs are not.
    c.demand.queued_gpus = 10;
    const JobRequest scarce_request = c.request(c.feed);
    PartnerPrice scarce(c.state, c.model, scarce_request, nullptr);
    REQUIRE(scarce.any());
    CHECK(scarce.of(0, {2}) == 0);
    CHECK(scarce.of(0, {0}) > 0);
    // So a shared slot never becomes cheaper than an idle GPU by the price: the feed takes an
    // idle GPU (whether to share at all is the sharing rule's call).
    CHECK(c.gpu_for(c.feed) >= 2);
}

TEST_CASE("partner price: a GPU with room for more keeps the value of a slot beside the next to come") {
    Cluster c(1, 3);
    c.model.crowding = true;  // a third job on a GPU slows all three 2.5 times: nobody wants that slot
    c.run(c.feed, 0);
    c.demand.queued_gpus = 10;
    // Three slots, a feed on it: it offers a slot beside the feed and one more beside the feed and
    // whoever comes next (m); with a second feed in, the slot left is worth nothing. Taking an idle
    // GPU instead would cost 1 + m - the slot beside a feed.
    const JobRequest request = c.request(c.feed);
    PartnerPrice price(c.state, c.model, request, nullptr);
    REQUIRE(price.any());
    CHECK(price.of(0, {0}) == doctest::Approx(kBesideFeed + kNext - 0 - idle_cost(kBesideFeed)));
}

TEST_CASE("partner price: the queue's mix is by GPUs asked, the heaviest classes, summing to 1") {
    QueueDemand d;
    std::vector<model::JobProfile> p(kMixClasses + 2);
    for (std::size_t i = 0; i < p.size(); ++i) p[i].name = "c" + std::to_string(i);
    // c0 asks for 4 GPUs queued and 4 submitted; c1 for 2 submitted; the rest 1 each.
    d.submitted(0, 4, 1, 60, &p[0]);
    d.queued(4, 1, 60, +1, &p[0]);
    d.submitted(1, 2, 1, 60, &p[1]);
    for (std::size_t i = 2; i < p.size(); ++i) d.submitted(2, 1, 1, 60, &p[i]);
    const PartnerDemand& mix = d.partners(10);
    REQUIRE(mix.mix.size() == kMixClasses);
    CHECK(mix.mix[0].first == &p[0]);
    CHECK(mix.mix[1].first == &p[1]);
    double total = 0;
    for (const auto& [c, w] : mix.mix) total += w;
    CHECK(total == doctest::Approx(1));
    CHECK(mix.mix[0].second == doctest::Approx(8.0 / (8 + 2 + (kMixClasses - 2))));
    CHECK(mix.queued_gpus == 4);
    // GPUs submitted per second over the 10 s counted, and the time limit asked.
    CHECK(mix.gpus_per_s == doctest::Approx((4 + 2 + p.size() - 2) / 10.0));
    CHECK(mix.typical_run_s == doctest::Approx(60));
    // The queued job starts: it counts no longer as queued.
    d.queued(4, 1, 60, -1, &p[0]);
    CHECK(d.partners(10).queued_gpus == 0);
    CHECK(d.partners(10).mix[0].second == doctest::Approx(4.0 / (4 + 2 + (kMixClasses - 2))));
}
