// A hand-made cluster for weighing pending jobs (elastic slots, admission). Its model slows two
// "heavy" jobs on one GPU to 1.9 each and anything sharing with a "light" job to 1.05, so sharing
// a heavy neighbour's GPU for W seconds costs a heavy job and its neighbour
// min(W, R) * 1.9 * (1 - 1/1.9) = 0.9 min(W, R) each, a light job 0.05 min(W, R) each, against
// the wait for a GPU of its own.
#pragma once

#include <doctest/doctest.h>

#include <map>

#include "daemon/steering/pending_weigh.hpp"
#include "place/coloc_policy.hpp"
#include "place/topology.hpp"

namespace coloc::daemon {

class PairModel final : public model::InterferenceModel {
public:
    double slowdown(const model::JobProfile& job, std::span<const model::Neighbour> neighbours) const override {
        double s = 1;
        for (const model::Neighbour& n : neighbours)
            if (n.where == model::Sharing::Gpu) s += job.name == "light" || n.profile->name == "light" ? 0.05 : 0.9;
        return s;
    }
    std::string name() const override { return "pairs"; }
};

struct PendingCluster {
    place::Topology topo;
    place::ClusterState state{topo};
    model::JobProfile heavy, light;
    PairModel model;
    place::ColocPolicy policy{model};
    std::map<place::JobId, double> ends;                                                   // now is 0
    explicit PendingCluster(int nodes = 1) : topo(place::uniform_topology(nodes, 2, 2)) {  // 2 GPUs x 2 slots each
        heavy.name = "heavy";
        light.name = "light";
    }
    void run(place::JobId id, int gpu, double end, int node = 0) {
        place::RunningJob j;
        j.id = id;
        j.profile = &heavy;
        j.where = {{node, {gpu}}};
        REQUIRE(state.add(std::move(j)));
        if (end > 0) ends[id] = end;
    }
    PendingJob pending(std::int64_t id, const model::JobProfile& p, double limit_s, int slots = 1) const {
        PendingJob j;
        j.id = id;
        j.profile = &p;
        j.time_limit_s = limit_s;
        j.slots_per_node = slots;
        return j;
    }
};

}  // namespace coloc::daemon
