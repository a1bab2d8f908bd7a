// The `steering:` section of colocd.yaml (colocd.yaml(5)); what it means is in daemon/steering/steering.hpp.
#pragma once

#include <string>
#include <vector>

namespace coloc::daemon {

// A job class: the Slurm feature colocd puts on nodes that are quiet for it, and the probe job
// that stands for the class (a catalogue profile; empty = the built-in probe of that feature).
struct SteeringClass {
    std::string feature;
    std::string profile;
};

// Every name colocd gives a node feature starts with this: what carries it is colocd's, the
// rest is the admin's.
inline constexpr const char* kSteeringFeaturePrefix = "coloc_";

struct SteeringConfig {
    bool enabled = false;            // at start; `colocctl steering on|off` switches at runtime
    int interval_s = 10;             // at most one round of updates per interval
    int max_updates_per_round = 64;  // node updates sent to Slurm per round (rate limit)
    int max_extra_weight = 100;      // added to the admin's weight on the busiest nodes
    double full_weight_loss = 0.5;   // predicted loss per GPU that earns max_extra_weight
    int weight_hysteresis = 5;       // a weight changes only by at least this much ...
    double quiet_loss = 0.05;        // a node is quiet for a class at or below this loss per GPU
    double quiet_hysteresis = 0.02;  // ... and stops being quiet only above quiet_loss + this
    std::string weight_profile;      // the probe for the weight; empty = the catalogue's default
    std::vector<SteeringClass> classes = {{"coloc_quietnet", ""}, {"coloc_quietgpu", ""}};
};

}  // namespace coloc::daemon
