// The same-GPU term across GPU types, and how sure it is.
//
// A GPU type with measured pairs of its own (from the catalogue or observed live) predicts from
// them by kernel regression. When other types have measured pairs too, the own type's pairs
// correct the other types' prediction (the transfer prediction) instead of replacing it: the
// kernel regression runs on what the transfer prediction leaves unexplained, shrunk toward 0
// where no similar pair was measured. So a new GPU type starts from what is known elsewhere,
// and every pair observed on it moves the pairs of similar jobs, as much as they are similar.
// Before the kernel regression, per-job effects (pair_effects.hpp) take out what the own type's
// pairs say about each job beside anyone. A type with no pair anywhere falls back to the utilisation prior (prior_gpu_speed).
// The transfer prediction itself is the prior moved toward the other types' pooled prediction
// only as far as that was shown to carry over among them, for jobs they measured and for jobs
// new to them (transfer_calibration.cpp): weak transfer keeps close to the prior and says so in
// its uncertainty.
//
// Uncertainty (standard deviation of the speed): a measured pair has the measurement noise; a
// prior alone has prior_gpu_sd (as wide as the utilisations let the speed lie); a kernel
// estimate blends the spread of the similar pairs it drew on (inflated when they are few) with
// its prior's uncertainty, by the same weights as the values.
// The other types' prediction is as uncertain as their kernel estimates and their disagreement;
// once the own type has pairs, the more of them the more it is as uncertain as they show.
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "model/coloc_model.hpp"

namespace coloc::model {

namespace {
constexpr double kRebuildStep = 0.005;  // an observed mean moving less waits for the next one

double blended_sd(const KernelEstimate& e, double prior_sd, const GpuShareParams& p) {
    if (!e.valid()) return prior_sd;
    if (e.exact) return kMeasuredSpeedSd;
    const double n = std::max(e.n_eff, 1.0);
    // The similar pairs' spread, plus the prior's uncertainty shrinking with their number:
    // a few similar pairs that happen to agree are not certainty.
    const double kernel_var =
        kMeasuredSpeedSd * kMeasuredSpeedSd + e.spread * e.spread * (1 + 1 / n) + prior_sd * prior_sd / (1 + n);
    const double var = (e.weight * kernel_var + p.prior_weight * prior_sd * prior_sd) / (e.weight + p.prior_weight);
    return std::sqrt(var);
}

// How far the own type's measured pairs stand from the transfer prediction once the per-job
// effects are taken out: the transfer prediction, corrected, is as sure as they show, once they
// are many; the other types' own uncertainty counts as kPriorPairs of them.
constexpr double kPriorPairs = 10;
// `squares`: the residual table's pairs, squared, in table order (HardwareView::residual_squares).
double corrected_sd(const std::vector<double>& squares, double transfer_sd) {
    double sum = transfer_sd * transfer_sd * kPriorPairs, n = kPriorPairs;
    for (double sq : squares) {
        sum += sq;
        ++n;
    }
    return std::sqrt(sum / n);
}

bool same_type(const JobProfile& a, const JobProfile& b) { return (a.id >= 0 && a.id == b.id) || a.name == b.name; }
}  // namespace

void ColocModel::merge_observed() {
    auto merge = [&](const ObservedPairs::Key& key, const ObservedSpeed& seen) {
        const auto& [gpu, job, neighbour] = key;
        const JobProfile* a = catalogue_.find(job);
        const JobProfile* b = catalogue_.find(neighbour);
        if (!a || !b || seen.n <= 0) return;  // a profile no longer in the catalogue
        auto it =
            std::find_if(tables_.begin(), tables_.end(), [&](const ReferenceTable& t) { return t.gpu_type() == gpu; });
        if (it == tables_.end()) it = tables_.insert(tables_.end(), ReferenceTable(gpu));
        const int i = it->add_job_with(a->name, [&] { return solo_features(*a, gpu); });
        const int j = it->add_job_with(b->name, [&] { return solo_features(*b, gpu); });
        // A catalogue measurement counts as one more sighting.
        const double n = static_cast<double>(seen.n);
        const double merged = it->has_speed(i, j) ? (it->speed(i, j) + n * seen.speed) / (n + 1) : seen.speed;
        it->set_speed(i, j, merged);
    };
    for (const auto& [key, seen] : observed_.all()) merge(key, seen);
    // A pair the job reported itself is measured more directly than one its elapsed time implies.
    for (const auto& [key, seen] : elapsed_.all())
        if (!observed_.all().count(key)) merge(key, seen);
}

void ColocModel::build_residual_table(HardwareView& v) const {
    v.transfer = false;
    v.residual_table = ReferenceTable(v.hw.gpu_type);
    v.residual_squares.clear();
    const ReferenceTable* own = v.table >= 0 ? &tables_[static_cast<std::size_t>(v.table)] : nullptr;
    if (!own || own->measured_pairs() == 0) return;
    const bool others = std::any_of(tables_.begin(), tables_.end(), [&](const ReferenceTable& t) {
        return t.gpu_type() != v.hw.gpu_type && t.measured_pairs() > 0;
    });
    if (!others) return;
    // Same indices as the own table, so a query's `ref` serves both.
    const int n = own->size();
    Eigen::MatrixXd y = Eigen::MatrixXd::Constant(n, n, std::nan("")), x = y;
    for (int i = 0; i < n; ++i) v.residual_table.add_job(own->name(i), own->features(i));
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            if (!own->has_speed(i, j)) continue;
            const JobProfile* a = catalogue_.find(own->name(i));
            const JobProfile* b = catalogue_.find(own->name(j));
            if (!a || !b) continue;
            x(i, j) = transfer_prediction(*a, *b, i == j, v).speed;
            y(i, j) = own->speed(i, j) - x(i, j);
        }
    v.effects.fit(y, x);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            if (!std::isnan(y(i, j))) v.residual_table.set_speed(i, j, y(i, j) - v.effects.value(i, j, x(i, j)));
    const ReferenceTable& t = v.residual_table;
    for (int i = 0; i < t.size(); ++i)
        for (int j = 0; j < t.size(); ++j)
            if (t.has_speed(i, j)) v.residual_squares.push_back(t.speed(i, j) * t.speed(i, j));
    v.transfer = true;
}

std::vector<const ReferenceTable*> ColocModel::other_tables(const HardwareView& v, const std::string& skip) const {
    std::vector<const ReferenceTable*> out;
    for (const ReferenceTable& t : tables_)
        if (t.gpu_type() != v.hw.gpu_type && t.gpu_type() != skip && t.measured_pairs() > 0) out.push_back(&t);
    return out;
}

bool ColocModel::seen_elsewhere(const JobProfile& a, const JobProfile& b, const HardwareView& v) const {
    for (const ReferenceTable& t : tables_)
        if (t.gpu_type() != v.hw.gpu_type && t.measured_pairs() > 0 && t.index_of(a.name) >= 0 &&
            t.index_of(b.name) >= 0)
            return true;
    return false;
}

Prediction ColocModel::pooled_prediction(const JobProfile& a, const JobProfile& b, bool same, const HardwareView& v,
                                         const std::vector<const ReferenceTable*>& tables,
                                         std::uint64_t unseen_group) const {
    // The memory that decides whether two footprints fit stays this hardware's.
    const GpuShareParams& p = v.gpu;
    const auto ref = [&](const ReferenceTable& t, const JobProfile& j) {
        return unseen_group && job_group(j) == unseen_group ? -1 : t.index_of(j.name);
    };
    double sum = 0, sum2 = 0, var = 0;
    const double prior = prior_gpu_speed(a, b, p), prior_sd = prior_gpu_sd(a, b, p);
    // A table holds the features of its jobs, made from the catalogue's profiles on its type.
    const auto ask = [&](const ReferenceTable& t, const JobProfile& j) {
        const int at = ref(t, j);
        return GpuQuery{&j, at >= 0 && own(j) ? t.features(at) : solo_features(j, t.gpu_type()), at};
    };
    for (const ReferenceTable* t : tables) {
        const GpuQuery qa = ask(*t, a), qb = ask(*t, b);
        const KernelEstimate e = kernel_gpu_estimate(*t, qa, qb, same, p);
        const double s = std::clamp(blend_with_prior(e, prior, p), p.min_speed, 1.0);
        const double sd = blended_sd(e, prior_sd, p);
        sum += s;
        sum2 += s * s;
        var += sd * sd;
    }
    if (tables.empty()) return {prior, prior_sd};
    const double k = static_cast<double>(tables.size()), mean = sum / k;
    // Each type's own uncertainty, and how much GPU types differ on a pair: if types are alike
    // but for independent differences of variance v, k of them spread by v (k - 1) / k about
    // their mean, and a new type lies v (1 + 1 / k) from it, so (k + 1) / (k - 1) times their spread.
    const double between = tables.size() > 1 ? std::max(0.0, sum2 / k - mean * mean) * (k + 1) / (k - 1) : 0.0;
    return {mean, std::sqrt(var / k + between)};
}

Prediction ColocModel::transfer_prediction(const JobProfile& a, const JobProfile& b, bool same,
                                           const HardwareView& v) const {
    const Prediction pooled = pooled_prediction(a, b, same, v, other_tables(v));
    const double prior = prior_gpu_speed(a, b, v.gpu);
    // The physics prior, moved toward what the other types predict as far as they were shown to
    // transfer among themselves, for jobs they measured or for jobs new to them; as uncertain as
    // that transfer proved, or as the pooled prediction's own doubt where that is wider.
    const TransferFit& fit = seen_elsewhere(a, b, v) ? v.seen_jobs : v.new_jobs;
    // The offset corrects the prior's level as computed from the inputs it was shown on: from
    // defaulted utilisations it says nothing about a prior computed from measured ones (nor the
    // other way round), so there it is left out and its size counts as doubt.
    double offset = fit.offset, error = fit.error;
    if (inputs_measured(a, b) != fit.measured_inputs) {
        error = std::hypot(error, offset);
        offset = 0;
    }
    const double speed = std::clamp(prior + offset + fit.weight * (pooled.speed - prior), v.gpu.min_speed, 1.0);
    return {speed, std::max(error, pooled.uncertainty)};
}

Prediction ColocModel::gpu_prediction_uncached(const JobProfile& a, const JobProfile& b, const HardwareView& v) const {
    const GpuShareParams& p = v.gpu;
    // Footprints that overflow this hardware's memory cannot co-run, whatever similar pairs did
    // on GPUs with more of it.
    if (!footprints_fit(a, b, p)) return {p.min_speed, kMeasuredSpeedSd};
    const bool same = same_type(a, b);
    const ReferenceTable* own = v.table >= 0 ? &tables_[static_cast<std::size_t>(v.table)] : nullptr;
    if (own && own->measured_pairs() > 0) {
        GpuQuery qa = query(a, v), qb = query(b, v);
        qa.profile = &a;
        qb.profile = &b;
        if (v.transfer) {
            const Prediction base = transfer_prediction(a, b, same, v);
            const KernelEstimate e = kernel_gpu_estimate(v.residual_table, qa, qb, same, p);
            const double correction = v.effects.value(qa.ref, qb.ref, base.speed) + blend_with_prior(e, 0.0, p);
            // The own type's pairs show how far off the corrected transfer is for the jobs they
            // hold; a job with no pair here has no effect of its own fitted, and may differ from
            // the corrected level as much as the jobs measured here differ from one another.
            const double measured_sd = corrected_sd(v.residual_squares, base.uncertainty);
            const double row = qa.ref >= 0 ? 0.0 : v.effects.row_spread();
            const double col = qb.ref >= 0 ? 0.0 : v.effects.col_spread();
            const double base_sd = std::sqrt(measured_sd * measured_sd + row * row + col * col);
            return {std::clamp(base.speed + correction, p.min_speed, 1.0), blended_sd(e, base_sd, p)};
        }
        const KernelEstimate e = kernel_gpu_estimate(*own, qa, qb, same, p);
        return {std::clamp(blend_with_prior(e, prior_gpu_speed(a, b, p), p), p.min_speed, 1.0),
                blended_sd(e, prior_gpu_sd(a, b, p), p)};
    }
    return transfer_prediction(a, b, same, v);
}

double ColocModel::table_speed(const JobProfile& job, const JobProfile& other, double measured) const {
    const double scale = calibration_.theta()[kGpuTerm];
    const double extra = measured - 1.0 - residuals_.get(job.id, other.id, kGpuTerm);
    const double delay = std::max(scale > 0 ? extra / scale : extra, 1.0 / kMaxPairSpeed - 1.0);
    return 1.0 / (1.0 + delay);
}

bool ColocModel::learn_gpu_pair(const JobProfile& job, const Neighbour& n, double measured) {
    // Only catalogue profiles name a pair; the default profile stands for many different jobs.
    if (!n.profile || !cached(job) || !cached(*n.profile) || job.id == 0 || n.profile->id == 0) return false;
    const JobProfile& other = *n.profile;
    // The pair is kept for the GPU type of the node it was seen on.
    const std::string& gpu_type = view(n.hardware).hw.gpu_type;
    observed_.add(gpu_type, job.name, other.name, table_speed(job, other, measured));
    ++version_;
    // Rebuilt once a tenth of the table's pairs are new or moved enough to matter (the first
    // pairs one by one), as the elapsed learning refits its window: every rebuild works out every
    // pair's prediction again, and a replay learns thousands of reports an hour.
    const ReferenceTable* own = table_of(gpu_type);
    const auto& seen = observed_.all().at({gpu_type, job.name, other.name});
    const int i = own ? own->index_of(job.name) : -1, j = own ? own->index_of(other.name) : -1;
    if (i < 0 || j < 0 || !own->has_speed(i, j) || seen.n == 1 ||
        std::abs(own->speed(i, j) - seen.speed) > kRebuildStep) {
        const std::size_t measured = own ? own->measured_pairs() : 0;
        if (++pending_pairs_ * std::size_t{10} >= std::max<std::size_t>(10, measured)) rebuild();
    }
    return true;
}

Prediction ColocModel::predict(const JobProfile& job, std::span<const Neighbour> neighbours) const {
    if (neighbours.empty()) return {1.0, 0.0};
    const double slowdown = delays(job, neighbours).slowdown();
    const TermVector& th = calibration_.theta();
    const TermMatrix& P = calibration_.covariance();
    const int slowest = slowest_gpu(job, neighbours);
    double var = 0;  // of the slowdown
    for (const Neighbour& n : neighbours) {
        if (n.where == Sharing::Gpu && slowest >= 0 && !(((n.gpus ? n.gpus : 1) >> slowest) & 1u)) continue;
        int term = 0;
        const double d = delta(job, n, term);
        if (term == kGpuTerm) {
            // The pair's own uncertainty already covers what the scale would add.
            const JobProfile& other = n.profile ? *n.profile : catalogue_.default_profile();
            const Prediction g = gpu_prediction(job, other, n.hardware);
            const double sd = th[term] * g.uncertainty / (g.speed * g.speed);  // d(1/s - 1)/ds
            var += sd * sd;
        } else {
            var += d * d * P(term, term) * params_.rls_noise_var;  // the term's calibrated scale
        }
    }
    return {1.0 / slowdown, std::sqrt(var) / (slowdown * slowdown)};
}

}  // namespace coloc::model
