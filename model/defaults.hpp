// Defaults that depend on other features (the plain ones are in profile.hpp); all documented in
// man/coloc-profiles.5. A missing feature never silently becomes 0 where 0 means "no effect".
#pragma once

#include "model/phase.hpp"
#include "model/profile.hpp"

namespace coloc::model {

// A distributed job (several GPUs or nodes) that does not state its communication share is
// assumed to spend this share of its iteration in gradient exchange.
inline constexpr double kDefaultDistributedCommFraction = 0.2;

inline double effective_comm_fraction(const JobProfile& p) {
    if (p.has("comm_fraction")) return p.comm_fraction;
    return (p.gpus > 1 || p.nodes > 1) ? kDefaultDistributedCommFraction : 0.0;
}

// Fraction of time the job talks to other GPUs of its own node (NVLink / PCIe peer traffic).
inline double intra_node_comm_fraction(const JobProfile& p) { return p.gpus > 1 ? effective_comm_fraction(p) : 0.0; }

// The job's inter-node communication as a periodic burst: comm_fraction of each period.
inline Burst link_burst(const JobProfile& p) {
    const double period = p.period();
    return Burst{period, effective_comm_fraction(p) * period};
}

}  // namespace coloc::model
