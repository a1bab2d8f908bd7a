#include "model/gpu_share.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "model/eigen.hpp"

namespace coloc::model {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kDim = kNumFeatures + 1;
using Mat = Eigen::Matrix<double, kDim, kDim>;
using Vec = Eigen::Matrix<double, kDim, 1>;

double busy(const JobProfile& p) { return std::clamp(std::max(p.sm_util, p.mem_bw_util), 0.0, 1.0); }

double kernel(const SoloFeatures& q, const SoloFeatures& r, const GpuShareParams& p) {
    double d2 = 0;
    const std::uint32_t both = q.mask & r.mask;
    for (int f = 0; f < kNumFeatures; ++f) {
        if (!((both >> f) & 1u)) continue;
        const double z = (q.x[static_cast<std::size_t>(f)] - r.x[static_cast<std::size_t>(f)]) /
                         p.bandwidth[static_cast<std::size_t>(f)];
        d2 += z * z;
    }
    // A feature only one side knows leaves their distance there unknown: count it as one
    // bandwidth apart, a typical difference, not as no difference (two jobs compared on fewer
    // features must not look more alike).
    d2 += std::popcount((q.mask ^ r.mask) & ((1u << kNumFeatures) - 1));
    if (q.family && r.family && q.family != r.family) d2 += p.family_penalty;
    return std::exp(-0.5 * d2);
}

// Weighted moments of the values a kernel estimate is drawn from.
struct Spread {
    double sw = 0, sw2 = 0, sv = 0, sv2 = 0;
    void add(double v, double w) {
        sw += w;
        sw2 += w * w;
        sv += w * v;
        sv2 += w * v * v;
    }
    void merge(const Spread& o) {
        sw += o.sw;
        sw2 += o.sw2;
        sv += o.sv;
        sv2 += o.sv2;
    }
    double n_eff() const { return sw2 > 0 ? sw * sw / sw2 : 0; }
    double sd() const {
        if (sw <= 0) return 0;
        const double m = sv / sw;
        return std::sqrt(std::max(0.0, sv2 / sw - m * m));
    }
};

// Weighted local linear regression evaluated at q; accumulates points one at a time so the
// caller needs no buffer.
class LocalLinear {
public:
    LocalLinear(const SoloFeatures& q, const GpuShareParams& p) : q_(q), p_(p) {
        A_.setZero();
        b_.setZero();
    }
    void add(const SoloFeatures& r, double value, double w) {
        if (w <= 0 || std::isnan(value)) return;
        Vec z = Vec::Zero();
        z[0] = 1;
        const std::uint32_t both = q_.mask & r.mask;
        for (int f = 0; f < kNumFeatures; ++f)
            if ((both >> f) & 1u)
                z[f + 1] = (r.x[static_cast<std::size_t>(f)] - q_.x[static_cast<std::size_t>(f)]) /
                           p_.bandwidth[static_cast<std::size_t>(f)];
        A_.noalias() += w * z * z.transpose();
        b_ += w * value * z;
        sw_ += w;
        spread_.add(value, w);
    }
    double weight() const { return sw_; }
    const Spread& spread() const { return spread_; }
    double estimate() const {
        if (sw_ <= 0) return kNaN;
        Mat A = A_;
        for (int f = 1; f < kDim; ++f) A(f, f) += p_.ridge * sw_;
        return A.ldlt().solve(b_)[0];
    }

private:
    const SoloFeatures& q_;
    const GpuShareParams& p_;
    Mat A_;
    Vec b_;
    double sw_ = 0;
    Spread spread_;
};

KernelEstimate finish(double value, double weight, const Spread& s) {
    KernelEstimate e;
    if (std::isnan(value) || !(weight > 0)) return e;
    e.value = value;
    e.weight = weight;
    e.n_eff = s.n_eff();
    e.spread = s.sd();
    return e;
}
}  // namespace

double blend_with_prior(const KernelEstimate& e, double prior, const GpuShareParams& p) {
    if (!e.valid()) return prior;
    if (e.exact) return e.value;
    return (e.weight * e.value + p.prior_weight * prior) / (e.weight + p.prior_weight);
}

bool footprints_fit(const JobProfile& a, const JobProfile& b, const GpuShareParams& p) {
    return !(a.has("gpu_mem_gb") && b.has("gpu_mem_gb") && a.gpu_mem_gb + b.gpu_mem_gb > p.gpu_mem_capacity_gb);
}

double prior_gpu_speed(const JobProfile& a, const JobProfile& b, const GpuShareParams& p) {
    if (!footprints_fit(a, b, p)) return p.min_speed;
    return 1.0 / (1.0 + busy(a) * busy(b) * (1.0 + p.slice_overhead));
}

double prior_gpu_sd(const JobProfile& a, const JobProfile& b, const GpuShareParams& p) {
    if (!inputs_measured(a, b) || !footprints_fit(a, b, p)) return kPriorSpeedSd;
    const double slowest = 1.0 / (1.0 + std::min(busy(a), busy(b)) * (1.0 + p.slice_overhead));
    return std::min(kPriorSpeedSd, std::hypot((1.0 - slowest) / 2, kMeasuredSpeedSd));
}

bool inputs_measured(const JobProfile& a, const JobProfile& b) {
    const auto measured = [](const JobProfile& p) { return p.has("sm_util") || p.has("mem_bw_util"); };
    return measured(a) && measured(b);
}

std::uint64_t job_group(const JobProfile& p) { return family_hash(p.family.empty() ? p.name : p.family); }

int ReferenceTable::add_job(const std::string& name, const SoloFeatures& features) {
    if (int i = index_of(name); i >= 0) return i;
    index_.emplace(name, static_cast<int>(names_.size()));
    names_.push_back(name);
    features_.push_back(features);
    // Grown by a row and a column; a table is built once, so the copy is no hot path.
    const std::size_t n = names_.size();
    std::vector<double> grown(n * n, kNaN);
    for (std::size_t r = 0; r + 1 < n; ++r)
        std::copy_n(speed_.begin() + static_cast<std::ptrdiff_t>(r * (n - 1)), n - 1,
                    grown.begin() + static_cast<std::ptrdiff_t>(r * n));
    speed_ = std::move(grown);
    return static_cast<int>(n - 1);
}

int ReferenceTable::index_of(const std::string& name) const {
    const auto it = index_.find(name);
    return it == index_.end() ? -1 : it->second;
}

double& ReferenceTable::at(int job, int neighbour) {
    return speed_[static_cast<std::size_t>(job) * names_.size() + static_cast<std::size_t>(neighbour)];
}
double ReferenceTable::at(int job, int neighbour) const {
    return speed_[static_cast<std::size_t>(job) * names_.size() + static_cast<std::size_t>(neighbour)];
}

void ReferenceTable::set_speed(int job, int neighbour, double speed) {
    measured_ += std::isnan(at(job, neighbour)) - std::isnan(speed);
    at(job, neighbour) = speed;
}
double ReferenceTable::speed(int job, int neighbour) const { return at(job, neighbour); }
bool ReferenceTable::has_speed(int job, int neighbour) const { return !std::isnan(at(job, neighbour)); }

KernelEstimate kernel_gpu_estimate(const ReferenceTable& t, const GpuQuery& a, const GpuQuery& b, bool same_job,
                                   const GpuShareParams& p) {
    const int n = t.size();
    if (a.ref >= 0 && b.ref >= 0 && t.has_speed(a.ref, b.ref)) {
        KernelEstimate e;
        e.value = t.speed(a.ref, b.ref);
        e.weight = 1e9;  // measured: the prior no longer matters
        e.n_eff = 1;
        e.exact = true;
        return e;
    }
    if (same_job) {
        // Self-pairs: from other jobs' self-pairs, by similarity to a.
        LocalLinear ll(a.features, p);
        for (int k = 0; k < n; ++k)
            if (k != a.ref) ll.add(t.features(k), t.speed(k, k), kernel(a.features, t.features(k), p));
        return finish(ll.estimate(), ll.weight(), ll.spread());
    }
    if (b.ref >= 0 || a.ref >= 0) {
        // Beside a reference job: how jobs like a fared beside b (column), and how a fared
        // beside jobs like b (row); both when both are reference jobs.
        double sum = 0, weight = 0;
        int parts = 0;
        Spread spread;
        if (b.ref >= 0) {
            LocalLinear col(a.features, p);
            for (int k = 0; k < n; ++k)
                if (k != a.ref) col.add(t.features(k), t.speed(k, b.ref), kernel(a.features, t.features(k), p));
            if (col.weight() > 0) {
                sum += col.estimate();
                weight += col.weight();
                spread.merge(col.spread());
                ++parts;
            }
        }
        if (a.ref >= 0) {
            LocalLinear row(b.features, p);
            for (int k = 0; k < n; ++k)
                if (k != b.ref) row.add(t.features(k), t.speed(a.ref, k), kernel(b.features, t.features(k), p));
            if (row.weight() > 0) {
                sum += row.estimate();
                weight += row.weight();
                spread.merge(row.spread());
                ++parts;
            }
        }
        if (parts == 0) return {};
        return finish(sum / parts, weight / parts, spread);
    }
    // Neither measured: similarity-weighted average over all measured pairs.
    Spread spread;
    for (int k = 0; k < n; ++k) {
        const double wk = kernel(a.features, t.features(k), p);
        if (wk < 1e-12) continue;
        for (int m = 0; m < n; ++m) {
            if (!t.has_speed(k, m)) continue;
            spread.add(t.speed(k, m), wk * kernel(b.features, t.features(m), p));
        }
    }
    if (!(spread.sw > 0)) return {};
    return finish(spread.sv / spread.sw, spread.sw, spread);
}

double predict_gpu_speed(const ReferenceTable& t, const GpuQuery& a, const GpuQuery& b, bool same_job,
                         const GpuShareParams& p) {
    const double prior = prior_gpu_speed(*a.profile, *b.profile, p);
    return std::clamp(blend_with_prior(kernel_gpu_estimate(t, a, b, same_job, p), prior, p), p.min_speed, 1.0);
}

}  // namespace coloc::model
