#include "replay/replay.hpp"

#include <stdexcept>

#include "place/policy_factory.hpp"

namespace coloc::replay {

place::Capacity capacity_of(const std::string& policy) {
    return policy == "exclusive" ? place::Capacity::Idle : place::Capacity::Open;
}

const std::vector<std::string>& replay_policy_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n = place::policy_names();
        n.push_back("oracle");
        return n;
    }();
    return names;
}

ReplayResult run_replay(const Workload& workload, const ReplaySetup& setup) {
    if (!setup.topology) throw std::invalid_argument("replay: no cluster");
    if (!setup.truth) throw std::invalid_argument("replay: no truth model");
    ReplayResult result;
    for (const std::string& name : setup.policies) {
        // The blind policies get no model: they do not need its predictions to place.
        // The replay's model does not learn while it runs: coloc may keep its predictions for
        // running jobs until their neighbours change.
        place::ColocOptions coloc = setup.coloc;
        coloc.reuse_predictions = true;
        // The oracle: coloc's engine and rule, placing by the truth itself.
        auto policy = name == "oracle" ? std::make_unique<place::ColocPolicy>(*setup.truth, coloc, "oracle")
                                       : place::make_policy(name, name == "coloc" ? setup.model : nullptr, coloc);
        if (setup.on_policy) setup.on_policy(name);
        SimOptions sim = setup.sim;
        sim.planner = name == "oracle" ? setup.truth : name == "coloc" ? setup.model : nullptr;
        result.runs.push_back(simulate(*setup.topology, *policy, capacity_of(name), *setup.truth, workload.jobs, sim));
        result.summaries.push_back(summarize(workload.jobs, result.runs.back(), setup.topology->total_gpus()));
    }
    return result;
}

}  // namespace coloc::replay
