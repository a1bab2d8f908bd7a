#include <algorithm>

#include "model/model.hpp"

namespace coloc::model {

namespace {
int lowest(std::uint64_t bits) { return __builtin_ctzll(bits); }
std::uint64_t bit(int g) { return std::uint64_t{1} << g; }
}  // namespace

double& DelaySum::slot(int g) {
    if (g < kInline) return first_[static_cast<std::size_t>(g)];
    const auto i = static_cast<std::size_t>(g - kInline);
    if (more_.size() <= i) more_.resize(i + 1, 0.0);
    return more_[i];
}

double DelaySum::on(int g) const {
    if (!(used & bit(g))) return 0;
    return g < kInline ? first_[static_cast<std::size_t>(g)] : more_[static_cast<std::size_t>(g - kInline)];
}

void DelaySum::add(Sharing where, std::uint64_t gpus, double delay) {
    if (where != Sharing::Gpu) {
        rest += delay;
        return;
    }
    for (std::uint64_t bits = gpus ? gpus : 1; bits; bits &= bits - 1) {
        const int g = lowest(bits);
        double& d = slot(g);
        if (!(used & bit(g))) d = 0;
        used |= bit(g);
        d += delay;
    }
}

double DelaySum::slowdown_with(std::uint64_t gpus, double on_gpus, double on_rest) const {
    double slowest = 0;
    bool any = false;
    for (std::uint64_t bits = used | gpus; bits; bits &= bits - 1) {
        const int g = lowest(bits);
        const double here = on(g) + ((gpus & bit(g)) ? on_gpus : 0);
        slowest = any ? std::max(slowest, here) : here;
        any = true;
    }
    return std::max(1.0, 1.0 + slowest + rest + on_rest);
}

}  // namespace coloc::model
