#include "model/observed_pairs.hpp"

#include <cmath>

namespace coloc::model {

double ObservedPairs::add(const std::string& gpu_type, const std::string& job, const std::string& neighbour,
                          double speed) {
    ObservedSpeed& s = pairs_[{gpu_type, job, neighbour}];
    const double before = s.n ? s.speed : 0.0;
    ++s.n;
    s.speed += (speed - s.speed) / static_cast<double>(s.n);
    if (s.n == 1) s.speed = speed;
    return std::abs(s.speed - before);
}

void ObservedPairs::set(const std::string& gpu_type, const std::string& job, const std::string& neighbour,
                        ObservedSpeed s) {
    pairs_[{gpu_type, job, neighbour}] = s;
}

}  // namespace coloc::model
