#include "replay/replay.hpp"

#include <stdexcept>

#include "model/coloc_model.hpp"
#include "place/policy_factory.hpp"
#include "place/slurm_node_policy.hpp"

namespace coloc::replay {

place::Capacity capacity_of(const std::string& policy) {
    return policy == "exclusive" ? place::Capacity::Idle : place::Capacity::Open;
}

const std::vector<std::string>& replay_policy_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n = place::policy_names();
        n.push_back("coloc-nolearn");
        n.push_back("oracle");
        n.push_back("slurm-coloc");
        return n;
    }();
    return names;
}

namespace {

// The copy of the model a learning run learns on, or null when it cannot learn.
std::unique_ptr<model::InterferenceModel> learning_copy(const ReplaySetup& setup) {
    std::unique_ptr<model::InterferenceModel> own;
    if (setup.learning_model)
        own = setup.learning_model();
    else if (const auto* coloc = dynamic_cast<const model::ColocModel*>(setup.model))
        own = std::make_unique<model::ColocModel>(*coloc);
    if (own && !own->learner()) own.reset();
    return own;
}

// Per node type: the GPU type the model knows it as (its hardware index; beyond its list, the first).
std::vector<std::string> gpu_types_of(const model::InterferenceModel& model, const place::Topology& topology) {
    std::vector<std::string> out;
    const auto* coloc = dynamic_cast<const model::ColocModel*>(&model);
    if (!coloc) return out;
    const std::vector<model::GpuHardware> kinds = coloc->hardware();
    for (std::size_t t = 0; t < topology.types().size(); ++t)
        out.push_back((t < kinds.size() ? kinds[t] : kinds.front()).gpu_type);
    return out;
}

}  // namespace

ReplayResult run_replay(const Workload& workload, const ReplaySetup& setup) {
    if (!setup.topology) throw std::invalid_argument("replay: no cluster");
    if (!setup.truth) throw std::invalid_argument("replay: no truth model");
    ReplayResult result;
    for (const std::string& name : setup.policies) {
        // The blind policies get no model: they do not need its predictions to place.
        // coloc's caches of predictions follow the model's version(): a learning model's
        // predictions change, and what was worked out with the old ones is worked out again.
        place::ColocOptions coloc = setup.coloc;
        coloc.reuse_predictions = true;
        const bool judged = name == "coloc" || name == "coloc-nolearn";
        // colocd without admission learns as colocd does; it only has no say in when jobs start.
        const bool slurm_node = name == "slurm-coloc";
        std::unique_ptr<model::InterferenceModel> own =
            (name == "coloc" || slurm_node) && setup.learning ? learning_copy(setup) : nullptr;
        const model::InterferenceModel* model = own ? own.get() : setup.model;
        if ((judged || slurm_node) && !model)
            throw std::invalid_argument("replay: policy '" + name + "' needs a model");
        // The oracle: coloc's engine and rule, placing by the truth itself.
        std::unique_ptr<place::Policy> policy;
        if (name == "oracle")
            policy = std::make_unique<place::ColocPolicy>(*setup.truth, coloc, "oracle");
        else if (name == "coloc-nolearn")
            policy = std::make_unique<place::ColocPolicy>(*model, coloc, "coloc-nolearn");
        else if (slurm_node)
            policy = std::make_unique<place::SlurmNodeColocGpus>(*model, coloc);
        else
            policy = place::make_policy(name, name == "coloc" ? model : nullptr, coloc);
        if (setup.on_policy) setup.on_policy(name);
        SimOptions sim = setup.sim;
        sim.planner = name == "oracle" ? setup.truth : judged ? model : nullptr;
        sim.learning.judged = judged ? model : nullptr;
        sim.learning.learner = own ? own->learner() : nullptr;
        if (own && sim.learning.gpu_types.empty()) sim.learning.gpu_types = gpu_types_of(*own, *setup.topology);
        // Only a model that learns gains from trying a pairing its margin holds back.
        sim.explore_share = own && !slurm_node ? setup.explore_share : 0;
        sim.admission_delay_s = judged || name == "oracle" ? setup.admission_delay_s : 0;
        result.runs.push_back(simulate(*setup.topology, *policy, capacity_of(name), *setup.truth, workload.jobs, sim));
        result.summaries.push_back(summarize(workload.jobs, result.runs.back(), setup.topology->total_gpus()));
    }
    return result;
}

}  // namespace coloc::replay
