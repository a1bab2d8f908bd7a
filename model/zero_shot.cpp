#include "model/zero_shot.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace coloc::model {

namespace {
double median(std::vector<double> v) {
    if (v.empty()) return 1.0;
    std::sort(v.begin(), v.end());
    const std::size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

std::string family_of(const Measurements& m, const std::string& job) {
    for (const SoloMeasurement& s : m.solo)
        if (s.job == job) return s.family.empty() ? job : s.family;
    return job;
}

bool same_gpu(const Measurements& m, const PairMeasurement& p) {
    const double s = normalised_speed(m, p);
    return p.where == Sharing::Gpu && s > 0;
}

// Scores the held-out pairs (`test`) with models fitted to `train`, one per GPU type.
ZeroShotScores score(const std::string& name, const Measurements& all, const Measurements& train,
                     const std::vector<const PairMeasurement*>& test, const ColocParams& params) {
    ZeroShotScores s;
    s.held_out = name;
    std::vector<double> speeds;
    for (const PairMeasurement& p : train.pairs)
        if (same_gpu(train, p)) speeds.push_back(normalised_speed(train, p));
    const double med = median(speeds);
    const ProfileCatalogue cat = catalogue_from(train);
    std::set<std::string> gpus;
    for (const PairMeasurement* p : test) gpus.insert(p->gpu_type);
    double unc = 0;
    for (const std::string& gpu : gpus) {
        ColocParams pp = params;
        pp.gpu_type = gpu;
        const ColocModel model(cat, pp);
        for (const PairMeasurement* p : test) {
            if (p->gpu_type != gpu) continue;
            const JobProfile* a = model.catalogue().find(p->job);
            const JobProfile* b = model.catalogue().find(p->neighbour);
            if (!a || !b) continue;
            const double truth = normalised_speed(all, *p);
            const Prediction pred = model.gpu_prediction(*a, *b);
            s.model.add(pred.speed, truth);
            s.none.add(1.0, truth);
            s.median.add(med, truth);
            s.util.add(utilisation_rule(*a, *b), truth);
            unc += pred.uncertainty;
        }
    }
    s.uncertainty = s.model.n ? unc / s.model.n : 0;
    return s;
}

template <typename Held>
ZeroShotScores hold_out(const std::string& name, const Measurements& m, const ColocParams& params, Held held) {
    Measurements train = m;
    train.pairs.clear();
    std::vector<const PairMeasurement*> test;
    for (const PairMeasurement& p : m.pairs) {
        if (!held(p))
            train.pairs.push_back(p);
        else if (same_gpu(m, p))
            test.push_back(&p);
    }
    return score(name, m, train, test, params);
}
}  // namespace

double utilisation_rule(const JobProfile& a, const JobProfile& b) {
    const double sum = a.sm_util + b.sm_util;
    return sum > 0 ? std::min(1.0, 1.0 / sum) : 1.0;
}

std::vector<ZeroShotScores> leave_one_gpu_type_out(const Measurements& m, const ColocParams& params) {
    std::set<std::string> gpus;
    for (const PairMeasurement& p : m.pairs)
        if (same_gpu(m, p)) gpus.insert(p.gpu_type);
    std::vector<ZeroShotScores> out;
    for (const std::string& g : gpus)
        out.push_back(hold_out(g, m, params, [&](const PairMeasurement& p) { return p.gpu_type == g; }));
    return out;
}

std::vector<ZeroShotScores> leave_one_family_out(const Measurements& m, const ColocParams& params) {
    std::set<std::string> families;
    for (const PairMeasurement& p : m.pairs)
        if (same_gpu(m, p)) families.insert(family_of(m, p.job));
    std::vector<ZeroShotScores> out;
    for (const std::string& f : families)
        out.push_back(hold_out(f, m, params, [&](const PairMeasurement& p) {
            return family_of(m, p.job) == f || family_of(m, p.neighbour) == f;
        }));
    return out;
}

}  // namespace coloc::model
