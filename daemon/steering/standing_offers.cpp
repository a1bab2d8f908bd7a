#include "daemon/steering/standing_offers.hpp"

#include <algorithm>

namespace coloc::daemon {

std::vector<StandingOffer> standing_offers(const place::ClusterState& planned, const std::vector<int>& nodes,
                                           const std::vector<AdmissionVerdict>& verdicts,
                                           const std::vector<PendingJob>& round) {
    std::vector<StandingOffer> out;
    if (std::any_of(verdicts.begin(), verdicts.end(), [](const AdmissionVerdict& v) { return v.gated && !v.release; }))
        return out;
    for (int n : nodes) {
        int gpus = planned.idle_gpus(n);
        for (const PendingJob& j : round)
            if (j.running && std::find(j.allowed_nodes.begin(), j.allowed_nodes.end(), n) != j.allowed_nodes.end())
                gpus -= j.slots_per_node;
        if (gpus > 0) out.push_back({n, gpus});
    }
    std::stable_sort(out.begin(), out.end(), [](const StandingOffer& a, const StandingOffer& b) {
        return a.gpus != b.gpus ? a.gpus < b.gpus : a.node < b.node;
    });
    return out;
}

std::string offers_text(const std::vector<StandingOffer>& offers, const place::Topology& topo, std::int64_t as_of,
                        std::int64_t expires) {
    std::string out = "# colocd's standing offers (colocd.yaml(5), admission.offers_file), read by job_submit.lua\n";
    out += "as_of " + std::to_string(as_of) + "\n";
    out += "expires " + std::to_string(expires) + "\n";
    for (const StandingOffer& o : offers)
        out += "offer " + topo.nodes()[static_cast<std::size_t>(o.node)].name + " " + std::to_string(o.gpus) + "\n";
    return out;
}

}  // namespace coloc::daemon
