// The simple (interference-blind) policies: each is one rule from a table (which nodes and GPUs
// it tries first, and whether a GPU may be shared), applied by place_by_rule.
//
//   exclusive  one job per GPU, nodes first fit in index order (Slurm with gres/gpu, no sharing)
//   slurm      Slurm's cons_tres on shared nodes: the first node in index order with enough GPUs
//              that have a free slot; on it, the least used GPUs (lowest index on ties)
//   pack       bin packing blind to interference: the fullest node that still fits, and on it the
//              fullest GPUs, so a GPU is shared before another one is opened
//   spread     the emptiest node first (most idle GPUs), and on it the least used GPUs; a GPU is
//              shared only when no node has enough idle ones
#pragma once

#include <string>

#include "place/policy.hpp"
#include "place/policy_support.hpp"

namespace coloc::place {

struct NamedRule {
    const char* name;
    SimpleRule rule;
};

// The rule named `name`; nullptr when no simple policy has that name.
const NamedRule* find_simple_rule(const std::string& name);

class SimplePolicy : public Policy {
public:
    // With `annotate`, decisions carry the model's predictions for the chosen placement.
    explicit SimplePolicy(const NamedRule& rule, const model::InterferenceModel* annotate = nullptr)
        : rule_(rule), annotate_(annotate) {}
    std::string name() const override { return rule_.name; }
    Decision place(const ClusterState& state, const JobRequest& request, int keep = 1) const override;

private:
    NamedRule rule_;
    const model::InterferenceModel* annotate_;
};

// The table's policies by their own names. (Throws std::logic_error should the table lack one.)
const NamedRule& simple_rule(const std::string& name);
struct ExclusivePolicy final : SimplePolicy {
    explicit ExclusivePolicy(const model::InterferenceModel* annotate = nullptr)
        : SimplePolicy(simple_rule("exclusive"), annotate) {}
};
struct SlurmFirstFitPolicy final : SimplePolicy {
    explicit SlurmFirstFitPolicy(const model::InterferenceModel* annotate = nullptr)
        : SimplePolicy(simple_rule("slurm"), annotate) {}
};
struct PackPolicy final : SimplePolicy {
    explicit PackPolicy(const model::InterferenceModel* annotate = nullptr)
        : SimplePolicy(simple_rule("pack"), annotate) {}
};
struct SpreadPolicy final : SimplePolicy {
    explicit SpreadPolicy(const model::InterferenceModel* annotate = nullptr)
        : SimplePolicy(simple_rule("spread"), annotate) {}
};

}  // namespace coloc::place
