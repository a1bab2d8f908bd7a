#include "model/measurements.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace coloc::model {

namespace {
double solo_of(const Measurements& m, const std::string& job, const std::string& gpu) {
    for (const SoloMeasurement& s : m.solo)
        if (s.job == job && s.gpu_type == gpu) return s.throughput;
    return 0;
}

// Faster GPU types first: the iteration time a profile states is the one on the best GPU.
int gpu_rank(const std::string& g) {
    if (g == "h100") return 0;
    if (g == "a100") return 1;
    if (g == "v100") return 2;
    if (g == "p100") return 3;
    if (g == "k80") return 5;
    return 4;
}
}  // namespace

double normalised_speed(const Measurements& m, const PairMeasurement& p) {
    const double solo = solo_of(m, p.job, p.gpu_type);
    return solo > 0 ? p.throughput / solo : std::numeric_limits<double>::quiet_NaN();
}

ProfileCatalogue catalogue_from(const Measurements& m) {
    ProfileCatalogue cat;
    for (const SoloMeasurement& s : m.solo) {
        if (!(s.throughput > 0)) continue;
        const JobProfile* old = cat.find(s.job);
        JobProfile p = old ? *old : JobProfile{};
        p.name = s.job;
        if (!s.family.empty()) {
            p.family = s.family;
            p.known["family"] = true;
        }
        if (s.batch_size > 0) {
            p.batch_size = s.batch_size;
            p.known["batch_size"] = true;
        }
        p.solo_throughput[s.gpu_type] = s.throughput;
        p.known["solo_throughput"] = true;
        std::string best;
        for (const auto& [g, thr] : p.solo_throughput)
            if (thr > 0 && (best.empty() || gpu_rank(g) < gpu_rank(best))) best = g;
        p.iter_time_s = 1.0 / p.solo_throughput[best];
        p.known["iter_time_s"] = true;
        cat.intern(std::move(p));
    }
    auto at = [&](const PairMeasurement& pm) {
        const std::string line = pm.line > 0 ? std::to_string(pm.line) : "";
        if (m.source.empty()) return line.empty() ? std::string() : "line " + line + ": ";
        return m.source + (line.empty() ? "" : ":" + line) + ": ";
    };
    for (const PairMeasurement& pm : m.pairs) {
        if (!cat.find(pm.job)) throw std::invalid_argument(at(pm) + "job '" + pm.job + "' has no solo measurement");
        const double s = normalised_speed(m, pm);
        // Checked at every level (fit calibrates node and link terms with them too).
        if (s != 0 && !std::isnan(s))
            if (auto why = pair_speed_problem(s); !why.empty())
                throw std::invalid_argument(at(pm) + "job '" + pm.job + "' beside '" + pm.neighbour + "' on " +
                                            pm.gpu_type + ": " + why + " (its throughput over its solo throughput)");
        if (pm.where != Sharing::Gpu || !cat.find(pm.neighbour)) continue;
        if (s > 0) cat.add_pair(MeasuredPair{pm.job, pm.neighbour, pm.gpu_type, s});
    }
    return cat;
}

}  // namespace coloc::model
