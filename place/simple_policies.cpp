#include "place/simple_policies.hpp"

#include <stdexcept>

namespace coloc::place {

namespace {

// The table: exclusive, slurm, pack, spread.
constexpr NamedRule kRules[] = {
    {"exclusive", {Capacity::Idle, NodeOrder::FirstFit, GpuOrder::Index}},
    {"slurm", {Capacity::Open, NodeOrder::FirstFit, GpuOrder::LeastUsed}},
    {"pack", {Capacity::Open, NodeOrder::Fullest, GpuOrder::MostUsed}},
    {"spread", {Capacity::Open, NodeOrder::Emptiest, GpuOrder::LeastUsed}},
};

}  // namespace

const NamedRule* find_simple_rule(const std::string& name) {
    for (const NamedRule& r : kRules)
        if (name == r.name) return &r;
    return nullptr;
}

const NamedRule& simple_rule(const std::string& name) {
    if (const NamedRule* r = find_simple_rule(name)) return *r;
    throw std::logic_error("no simple policy '" + name + "'");
}

Decision SimplePolicy::place(const ClusterState& state, const JobRequest& request, int) const {
    return place_by_rule(state, request, rule_.rule, annotate_);
}

}  // namespace coloc::place
