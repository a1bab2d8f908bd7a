// How far the other GPU types' pairs carry over to a type with none of its own, learned by
// cross-validation among those types, for the two ways a new site meets its jobs:
//   seen jobs  the pair's jobs were measured on other types: each other type held out in turn
//              and its pairs predicted from the rest (leave one GPU type out);
//   new jobs   a job no type measured: each family held out in turn, and each type in turn, every
//              pair with one of its jobs on that type predicted from the other families' pairs
//              on the other types (leave one family and one GPU type out).
// Either way a least-squares line through (prediction - prior, truth - prior) says how far the
// prediction carries (its slope, the weight: 0 = not at all, 1 = wholly) and how far the prior's
// level is off (its offset); both are drawn toward the prior alone (0, 0) by kCalibrationPairs
// pairs' worth of doubt. The error is what that line left: groups that disagree among
// themselves, so that transfer is weak, get a low weight and a wide error. With fewer than two
// types or groups to hold out nothing can be learned: the prediction is taken as is, as unsure
// as half the flat prior (kUnprovenSd) at least; with no other type at all, the prior alone,
// with its own uncertainty (prior_gpu_sd).
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <set>
#include <vector>

#include "model/coloc_model.hpp"

namespace coloc::model {

namespace {
constexpr double kCalibrationPairs = 20;
constexpr double kUnprovenSd = kPriorSpeedSd / 2;

// One held-out pair: (prediction - prior, truth - prior), and whether its prior was measured.
struct Shown {
    double moved, truth;
    bool measured;
};

TransferFit unproven(bool any_other) {
    TransferFit f;
    f.weight = any_other ? 1.0 : 0.0;
    // With no other type the prediction is the prior's, as unsure as prior_gpu_sd says.
    f.error = any_other ? kUnprovenSd : 0.0;
    return f;
}

TransferFit fit_line(const std::vector<Shown>& seen) {
    // Normal equations of (offset, weight) with the ridge.
    double n = 0, sx = 0, sxx = 0, sy = 0, sxy = 0, measured = 0;
    for (const Shown& s : seen) {
        n += 1;
        sx += s.moved;
        sxx += s.moved * s.moved;
        sy += s.truth;
        sxy += s.moved * s.truth;
        measured += s.measured;
    }
    const double ridge = kCalibrationPairs * std::max(sxx / n, 1e-6);
    Eigen::Matrix2d A;
    A << n + kCalibrationPairs, sx, sx, sxx + ridge;
    const Eigen::Vector2d sol = A.ldlt().solve(Eigen::Vector2d(sy, sxy));
    TransferFit f;
    f.weight = std::clamp(sol[1], 0.0, 1.0);
    // The offset that goes with the weight as clamped.
    f.offset = sol[1] == f.weight ? sol[0] : (sy - f.weight * sx) / (n + kCalibrationPairs);
    double err = 0;
    for (const Shown& s : seen) {
        const double e = s.truth - f.offset - f.weight * s.moved;
        err += e * e;
    }
    f.error = std::sqrt(err / n);
    f.measured_inputs = measured > n / 2;
    return f;
}

// The table with every pair that has a job of `group` taken out (indices kept).
ReferenceTable without_group(const ReferenceTable& t, std::uint64_t group, const ProfileCatalogue& catalogue) {
    ReferenceTable out = t;
    std::vector<bool> in(static_cast<std::size_t>(t.size()));
    for (int i = 0; i < t.size(); ++i) {
        const JobProfile* p = catalogue.find(t.name(i));
        in[static_cast<std::size_t>(i)] = p && job_group(*p) == group;
    }
    for (int i = 0; i < t.size(); ++i)
        for (int j = 0; j < t.size(); ++j)
            if (in[static_cast<std::size_t>(i)] || in[static_cast<std::size_t>(j)]) out.set_speed(i, j, std::nan(""));
    return out;
}
}  // namespace

void ColocModel::learn_transfer(HardwareView& v) {
    const std::uint64_t inputs = transfer_inputs(v);
    KeptTransfer& kept = kept_transfer_[v.hw.gpu_type];
    if (kept.inputs != inputs) kept = {inputs, learn_seen_jobs(v), learn_new_jobs(v)};
    v.seen_jobs = kept.seen_jobs;
    v.new_jobs = kept.new_jobs;
}

std::uint64_t ColocModel::transfer_inputs(const HardwareView& v) const {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a over everything the fits read
    const auto mix = [&h](std::uint64_t x) {
        for (int b = 0; b < 8; ++b) h = (h ^ ((x >> (8 * b)) & 0xff)) * 1099511628211ull;
    };
    const auto mix_double = [&mix](double d) { mix(std::bit_cast<std::uint64_t>(d)); };
    const GpuShareParams& p = v.gpu;
    for (double b : p.bandwidth) mix_double(b);
    for (double x : {p.family_penalty, p.ridge, p.prior_weight, p.slice_overhead, p.gpu_mem_capacity_gb, p.min_speed})
        mix_double(x);
    for (const ReferenceTable* t : other_tables(v)) {
        mix(family_hash(t->gpu_type()));
        for (int i = 0; i < t->size(); ++i) {
            const JobProfile* job = catalogue_.find(t->name(i));
            mix(job ? job->serial : 0);
            mix(family_hash(t->name(i)));
            for (int j = 0; j < t->size(); ++j) mix_double(t->has_speed(i, j) ? t->speed(i, j) : -1.0);
        }
    }
    return h == 0 ? 1 : h;
}

TransferFit ColocModel::learn_seen_jobs(const HardwareView& v) const {
    const std::vector<const ReferenceTable*> others = other_tables(v);
    if (others.size() < 2) return unproven(!others.empty());
    std::vector<Shown> seen;
    for (const ReferenceTable* t : others) {
        const std::vector<const ReferenceTable*> rest = other_tables(v, t->gpu_type());
        for (int i = 0; i < t->size(); ++i)
            for (int j = 0; j < t->size(); ++j) {
                if (!t->has_speed(i, j)) continue;
                const JobProfile* a = catalogue_.find(t->name(i));
                const JobProfile* b = catalogue_.find(t->name(j));
                if (!a || !b) continue;
                const double prior = prior_gpu_speed(*a, *b, v.gpu);
                const double x = pooled_prediction(*a, *b, i == j, v, rest).speed;
                seen.push_back({x - prior, t->speed(i, j) - prior, inputs_measured(*a, *b)});
            }
    }
    return seen.empty() ? unproven(true) : fit_line(seen);
}

TransferFit ColocModel::learn_new_jobs(const HardwareView& v) const {
    const std::vector<const ReferenceTable*> others = other_tables(v);
    std::set<std::uint64_t> groups;
    for (const ReferenceTable* t : others)
        for (int i = 0; i < t->size(); ++i)
            if (const JobProfile* p = catalogue_.find(t->name(i))) groups.insert(job_group(*p));
    if (others.size() < 2 || groups.size() < 2) return unproven(!others.empty());
    std::vector<Shown> seen;
    for (const std::uint64_t g : groups) {
        std::vector<ReferenceTable> held;
        held.reserve(others.size());
        for (const ReferenceTable* t : others) held.push_back(without_group(*t, g, catalogue_));
        for (std::size_t k = 0; k < others.size(); ++k) {
            const ReferenceTable* t = others[k];
            std::vector<const ReferenceTable*> rest;
            for (std::size_t r = 0; r < held.size(); ++r)
                if (r != k) rest.push_back(&held[r]);
            for (int i = 0; i < t->size(); ++i)
                for (int j = 0; j < t->size(); ++j) {
                    if (!t->has_speed(i, j)) continue;
                    const JobProfile* a = catalogue_.find(t->name(i));
                    const JobProfile* b = catalogue_.find(t->name(j));
                    if (!a || !b || (job_group(*a) != g && job_group(*b) != g)) continue;
                    const double prior = prior_gpu_speed(*a, *b, v.gpu);
                    const double x = pooled_prediction(*a, *b, i == j, v, rest, g).speed;
                    seen.push_back({x - prior, t->speed(i, j) - prior, inputs_measured(*a, *b)});
                }
        }
    }
    return seen.empty() ? unproven(true) : fit_line(seen);
}

}  // namespace coloc::model
