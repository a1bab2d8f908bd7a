// Same node, different GPUs: contention below the GPU, by how much topology two jobs share.
//
// Every resource here is fair-shared, so a job that spends a fraction h of its solo time on a
// resource is slowed on that part by the share of time its neighbour keeps the resource busy:
// extra ~ h_a * h_b. The levels are nested (model.hpp): a neighbour on the same PCIe switch also
// shares the node, one in the same NVLink island also shares the switch.
//   Node:   host memory bandwidth and CPU data loading   kappa_host   * h_a * h_b
//   Switch: + the switch's upstream PCIe link (H2D)      kappa_pcie   * h_a * h_b
//   Island: + NVLink, used by multi-GPU jobs' all-reduce kappa_nvlink * x_a * x_b
// with h = host_pressure and x = the intra-node communication fraction (0 for 1-GPU jobs).
// The kappas are conservative starting points; the learner calibrates this term online.
#pragma once

#include "model/model.hpp"

namespace coloc::model {

struct NodeShareParams {
    double host = 0.5;
    double pcie = 0.3;
    double nvlink = 0.25;
};

// Slowdown increment of `a` from `b` sharing at `where` (Island, Switch or Node; 0 otherwise).
double node_delta(const JobProfile& a, const JobProfile& b, Sharing where, const NodeShareParams& p);

}  // namespace coloc::model
