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

double PairResiduals::get(int job, int neighbour, int term) const {
    if (job < 0 || neighbour < 0 || map_.empty()) return 0;
    auto it = map_.find(key(job, neighbour, term));
    return it == map_.end() ? 0 : it->second.value;
}

long PairResiduals::count(int job, int neighbour, int term) const {
    if (job < 0 || neighbour < 0 || map_.empty()) return 0;
    auto it = map_.find(key(job, neighbour, term));
    return it == map_.end() ? 0 : it->second.n;
}

void PairResiduals::add(int job, int neighbour, int term, double error) {
    if (job < 0 || neighbour < 0) return;
    Residual& r = map_[key(job, neighbour, term)];
    ++r.n;
    const double rate = std::max(1.0 / static_cast<double>(r.n), min_rate_);
    r.value += rate * error;
}

void PairResiduals::set(int job, int neighbour, int term, Residual r) { map_[key(job, neighbour, term)] = r; }

}  // namespace coloc::model
