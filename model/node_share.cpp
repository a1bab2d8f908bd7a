#include "model/node_share.hpp"

#include <algorithm>

#include "model/defaults.hpp"

namespace coloc::model {

double node_delta(const JobProfile& a, const JobProfile& b, Sharing where, const NodeShareParams& p) {
    if (where == Sharing::Gpu || where == Sharing::Link) return 0;
    const double ha = std::clamp(a.host_pressure, 0.0, 1.0), hb = std::clamp(b.host_pressure, 0.0, 1.0);
    double d = p.host * ha * hb;
    if (where == Sharing::Switch || where == Sharing::Island) d += p.pcie * ha * hb;
    if (where == Sharing::Island) d += p.nvlink * intra_node_comm_fraction(a) * intra_node_comm_fraction(b);
    return d;
}

}  // namespace coloc::model
