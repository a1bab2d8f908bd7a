#include "model/learner.hpp"

#include <algorithm>

namespace coloc::model {

const char* term_name(int term) {
    switch (term) {
        case kGpuTerm:
            return "gpu";
        case kTopoTerm:
            return "node";
        case kLinkTerm:
            return "link";
        default:
            return "?";
    }
}

// P is kept in units of the noise variance, so the prior enters as prior_var / noise_var.
Calibration::Calibration(double prior_var, double noise_var, double forgetting)
    : P_(TermMatrix::Identity() * (prior_var / noise_var)), forgetting_(forgetting) {}

void Calibration::update(const TermVector& x, double target, double weight) {
    if (x.squaredNorm() <= 0 || !(weight > 0)) return;  // nothing here speaks to any term
    const double denom = forgetting_ / weight + x.dot(P_ * x);
    const TermVector gain = P_ * x / denom;
    theta_ += gain * (target - theta_.dot(x));
    P_ = (P_ - gain * x.transpose() * P_) / forgetting_;
    P_ = 0.5 * (P_ + P_.transpose());  // keep it symmetric against rounding drift
    theta_ = theta_.cwiseMax(0.0);     // a term never speeds a job up
    ++n_;
}

void Calibration::set_state(const TermVector& theta, const TermMatrix& P, long n) {
    theta_ = theta;
    P_ = P;
    n_ = n;
}

std::uint64_t PairResiduals::key(int job, int neighbour, int term) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(job)) << 34) |
           (static_cast<std::uint64_t>(static_cast<std::uint32_t>(neighbour) & 0xFFFFFFFu) << 4) |
           static_cast<std::uint64_t>(term & 0xF);
}

void PairResiduals::unkey(std::uint64_t k, int& job, int& neighbour, int& term) {
    job = static_cast<int>(k >> 34);
    neighbour = static_cast<int>((k >> 4) & 0x3FFFFFFFu);
    term = static_cast<int>(k & 0xF);
}

std::size_t PairResiduals::dense_at(int job, int neighbour, int term) const {
    const auto ids = static_cast<std::size_t>(dense_ids_);
    return (static_cast<std::size_t>(job) * ids + static_cast<std::size_t>(neighbour)) * 4 +
           static_cast<std::size_t>(term);
}

// The dense slot of a pair of small ids, the table grown (from the map) to hold them; null for
// larger ids or terms, which the map alone keeps.
Residual* PairResiduals::dense_slot(int job, int neighbour, int term) {
    if (job >= kDenseIds || neighbour >= kDenseIds || term < 0 || term >= 4) return nullptr;
    if (std::max(job, neighbour) >= dense_ids_) {
        dense_ids_ = std::min(kDenseIds, std::max({job, neighbour, 2 * dense_ids_}) + 1);
        dense_.assign(static_cast<std::size_t>(dense_ids_ * dense_ids_) * 4, Residual{});
        for (const auto& [k, r] : map_) {
            int a = 0, b = 0, t = 0;
            unkey(k, a, b, t);
            if (a < dense_ids_ && b < dense_ids_ && t < 4) dense_[dense_at(a, b, t)] = r;
        }
    }
    return &dense_[dense_at(job, neighbour, term)];
}

const Residual* PairResiduals::find(int job, int neighbour, int term) const {
    static const Residual none;
    if (job < 0 || neighbour < 0) return &none;
    if (job < kDenseIds && neighbour < kDenseIds && term >= 0 && term < 4)
        return job < dense_ids_ && neighbour < dense_ids_ ? &dense_[dense_at(job, neighbour, term)] : &none;
    auto it = map_.find(key(job, neighbour, term));
    return it == map_.end() ? &none : &it->second;
}

double PairResiduals::get(int job, int neighbour, int term) const { return find(job, neighbour, term)->value; }

long PairResiduals::count(int job, int neighbour, int term) const { return find(job, neighbour, term)->n; }

void PairResiduals::add(int job, int neighbour, int term, double error) {
    if (job < 0 || neighbour < 0) return;
    Residual& r = map_[key(job, neighbour, term)];
    ++r.n;
    const double rate = std::max(1.0 / static_cast<double>(r.n), min_rate_);
    r.value += rate * error;
    if (Residual* d = dense_slot(job, neighbour, term)) *d = r;
}

void PairResiduals::set(int job, int neighbour, int term, Residual r) {
    map_[key(job, neighbour, term)] = r;
    if (job < 0 || neighbour < 0) return;
    if (Residual* d = dense_slot(job, neighbour, term)) *d = r;
}

}  // namespace coloc::model
