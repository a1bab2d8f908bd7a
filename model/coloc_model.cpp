#include "model/coloc_model.hpp"

#include <algorithm>

#include "model/defaults.hpp"
#include "model/phase.hpp"

namespace coloc::model {

namespace {
const JobProfile& builtin_default() {
    static const JobProfile p;
    return p;
}

// Whether `n` enters a prediction whose slowest GPU is `slowest` (-1: the job has no Gpu
// neighbour, or all share the one GPU): Gpu neighbours on the job's other GPUs are hidden by it.
bool counts(const Neighbour& n, int slowest) {
    return n.where != Sharing::Gpu || slowest < 0 || ((n.gpus ? n.gpus : 1) >> slowest) & 1u;
}

int term_of(Sharing where) {
    switch (where) {
        case Sharing::Gpu:
            return kGpuTerm;
        case Sharing::Link:
            return kLinkTerm;
        default:
            return kTopoTerm;
    }
}

bool several(std::uint64_t used) { return (used & (used - 1)) != 0; }

struct SavedModel final : Learner::Saved {
    explicit SavedModel(const ColocModel& m) : model(m) {}
    ColocModel model;
};

}  // namespace

double Contributions::slowdown() const { return std::max(1.0, 1.0 + gpu + topo + link + residual); }

ColocModel::ColocModel() : ColocModel(ProfileCatalogue{}) {}

ColocModel::ColocModel(ProfileCatalogue catalogue, ColocParams params)
    : catalogue_(std::move(catalogue)),
      params_(std::move(params)),
      calibration_(params_.rls_prior_var, params_.rls_noise_var, params_.rls_forgetting),
      residuals_(params_.residual_min_rate) {
    rebuild();
}

void ColocModel::set_params(const ColocParams& params) {
    const bool learning_changed =
        params.rls_prior_var != params_.rls_prior_var || params.rls_noise_var != params_.rls_noise_var ||
        params.rls_forgetting != params_.rls_forgetting || params.residual_min_rate != params_.residual_min_rate;
    params_ = params;
    ++version_;
    if (learning_changed) {
        Calibration fresh(params_.rls_prior_var, params_.rls_noise_var, params_.rls_forgetting);
        fresh.set_state(calibration_.theta(), calibration_.covariance(), calibration_.updates());
        calibration_ = fresh;
        PairResiduals kept(params_.residual_min_rate);
        for (const auto& [k, r] : residuals_.all()) {
            int a, b, t;
            PairResiduals::unkey(k, a, b, t);
            kept.set(a, b, t, r);
        }
        residuals_ = std::move(kept);
    }
    rebuild();
}

void ColocModel::rebuild(bool cache) {
    pending_pairs_ = 0;
    tables_.clear();
    for (const MeasuredPair& m : catalogue_.pairs()) {
        const JobProfile* a = catalogue_.find(m.job);
        const JobProfile* b = catalogue_.find(m.neighbour);
        if (!a || !b) continue;
        auto it = std::find_if(tables_.begin(), tables_.end(),
                               [&](const ReferenceTable& t) { return t.gpu_type() == m.gpu_type; });
        if (it == tables_.end()) it = tables_.insert(tables_.end(), ReferenceTable(m.gpu_type));
        const int i = it->add_job_with(a->name, [&] { return solo_features(*a, m.gpu_type); });
        const int j = it->add_job_with(b->name, [&] { return solo_features(*b, m.gpu_type); });
        it->set_speed(i, j, m.speed);
    }
    merge_observed();
    cache_size_ = 0;
    serials_.clear();
    bursts_.clear();
    for (const JobProfile& p : catalogue_.profiles()) {
        serials_.push_back(p.serial);
        // Copies of a profile keep its serial and may differ in size (replay/workload.cpp),
        // which decides whether an unstated comm_fraction is a distributed job's default.
        JobProfile one = p, several = p;
        one.gpus = one.nodes = 1;
        several.gpus = 2;
        bursts_.push_back({link_burst(one), link_burst(several)});
    }
    rebuild_hardware(cache);
}

// A profile is served from the caches only if it is the catalogue's profile of that id: the
// engine may hand in profiles from another catalogue whose ids mean something else.
bool ColocModel::cached(const JobProfile& p) const {
    // The serial first: no walk into the catalogue and no string compare on the hot path
    // (colocd hands in profiles from its own copy of the catalogue).
    if (own(p)) return true;
    if (p.id < 0 || static_cast<std::size_t>(p.id) >= serials_.size()) return false;
    const JobProfile& mine = catalogue_.at(p.id);
    return &mine == &p || mine.name == p.name;
}

bool ColocModel::own(const JobProfile& p) const {
    const auto i = static_cast<std::size_t>(p.id);
    return p.id >= 0 && i < serials_.size() && p.serial != 0 && serials_[i] == p.serial;
}

Burst ColocModel::burst_of(const JobProfile& p) const {
    if (!own(p)) return link_burst(p);
    return bursts_[static_cast<std::size_t>(p.id)][p.gpus > 1 || p.nodes > 1 ? 1 : 0];
}

double ColocModel::delta(const JobProfile& job, const Neighbour& n, int& term) const {
    const JobProfile& other =
        n.profile ? *n.profile : (catalogue_.size() ? catalogue_.default_profile() : builtin_default());
    term = term_of(n.where);
    switch (n.where) {
        case Sharing::Gpu:
            return 1.0 / gpu_speed(job, other, n.hardware) - 1.0;
        case Sharing::Link:
            return link_delta(burst_of(job), burst_of(other), n.phase_offset_s);
        default:
            return node_delta(job, other, n.where, params_.node);
    }
}

double ColocModel::residual(const JobProfile& job, const Neighbour& n, int term) const {
    if (!n.profile || !cached(job) || !cached(*n.profile)) return 0;
    return residuals_.get(job.id, n.profile->id, term);
}

double ColocModel::delay(const JobProfile& job, const Neighbour& n) const {
    int term = 0;
    const double d = delta(job, n, term);
    return d * calibration_.theta()[term] + residual(job, n, term);
}

DelaySum ColocModel::delays(const JobProfile& job, std::span<const Neighbour> neighbours) const {
    DelaySum sum;
    for (const Neighbour& n : neighbours) sum.add(n.where, n.gpus, delay(job, n));
    return sum;
}

int ColocModel::slowest_gpu(const JobProfile& job, std::span<const Neighbour> neighbours) const {
    const DelaySum sum = delays(job, neighbours);
    if (!several(sum.used)) return -1;  // at most one GPU: nothing to choose
    int slowest = __builtin_ctzll(sum.used);
    for (std::uint64_t bits = sum.used; bits; bits &= bits - 1) {
        const int g = __builtin_ctzll(bits);
        if (sum.on(g) > sum.on(slowest)) slowest = g;
    }
    return slowest;
}

Contributions ColocModel::contributions(const JobProfile& job, std::span<const Neighbour> neighbours) const {
    Contributions c;
    const TermVector& th = calibration_.theta();
    const int slowest = slowest_gpu(job, neighbours);
    for (const Neighbour& n : neighbours) {
        if (!counts(n, slowest)) continue;
        int term = 0;
        const double d = delta(job, n, term) * th[term];
        (term == kGpuTerm ? c.gpu : term == kTopoTerm ? c.topo : c.link) += d;
        c.residual += residual(job, n, term);
    }
    return c;
}

double ColocModel::slowdown(const JobProfile& job, std::span<const Neighbour> neighbours) const {
    if (neighbours.empty()) return 1.0;
    return delays(job, neighbours).slowdown();
}

void ColocModel::observe(const JobProfile& job, std::span<const Neighbour> neighbours, double measured) {
    if (neighbours.empty() || !(measured > 0)) return;
    // One same-GPU neighbour and nothing else: a measured pair, kept as one (coloc_transfer.cpp).
    if (neighbours.size() == 1 && neighbours[0].where == Sharing::Gpu && learn_gpu_pair(job, neighbours[0], measured))
        return;
    ++version_;
    // Learns about the neighbours the prediction is made of: those on the job's slowest GPU
    // (as the model now sees it) and those sharing less than a GPU.
    const int slowest = slowest_gpu(job, neighbours);
    TermVector d = TermVector::Zero();
    double residual = 0;
    long seen = 0;  // how often the most familiar of these pairs was observed before
    std::size_t counted = 0;
    for (const Neighbour& n : neighbours) {
        if (!counts(n, slowest)) continue;
        ++counted;
        int term = 0;
        const double x = delta(job, n, term);
        d[term] += x;
        residual += this->residual(job, n, term);
        if (n.profile && cached(job) && cached(*n.profile))
            seen = std::max(seen, residuals_.count(job.id, n.profile->id, term));
    }
    const double weight = 1.0 / static_cast<double>((seen + 1) * (seen + 1));
    calibration_.update(d, measured - 1.0 - residual, weight);

    // Whatever the calibration cannot explain goes to the pairs, in proportion to their share.
    const double error = measured - (1.0 + calibration_.theta().dot(d) + residual);
    double total = 0;
    const TermVector& th = calibration_.theta();
    for (const Neighbour& n : neighbours) {
        if (!counts(n, slowest)) continue;
        int term = 0;
        const double x = delta(job, n, term);
        total += std::max(0.0, x * th[term]);
    }
    if (!cached(job)) return;  // residuals are kept per catalogue pair only
    for (const Neighbour& n : neighbours) {
        if (!counts(n, slowest) || !n.profile || !cached(*n.profile)) continue;
        int term = 0;
        const double c = std::max(0.0, delta(job, n, term) * th[term]);
        const double share = total > 0 ? c / total : 1.0 / static_cast<double>(counted);
        residuals_.add(job.id, n.profile->id, term, error * share);
    }
}

std::unique_ptr<Learner::Saved> ColocModel::save() const { return std::make_unique<SavedModel>(*this); }

void ColocModel::restore(std::unique_ptr<Saved> saved) {
    if (!saved) return;
    ColocModel& back = static_cast<SavedModel&>(*saved).model;  // only save() makes them
    // Learning never changes the catalogue, and callers hold pointers into this one: it stays
    // (moving a deque keeps its elements where they are).
    back.catalogue_ = std::move(catalogue_);
    *this = std::move(back);
}

}  // namespace coloc::model
