// Solo features of a job on one GPU type: what the same-GPU term compares jobs by.
// Only features the profile actually gives take part in similarity (a default value would make
// every unmeasured job look alike); the physics prior uses the documented defaults instead.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "model/profile.hpp"

namespace coloc::model {

enum Feature : int {
    kLogBatch = 0,  // log2 batch size
    kRatioV100K80,  // log(v100 / k80 solo throughput): how much a faster GPU helps
    kRatioP100K80,  // log(p100 / k80 solo throughput)
    kLogIterTime,   // log solo iteration time on this GPU type (s)
    kSmUtil,        // solo SM utilisation, 0..1
    kMemBwUtil,     // solo memory-bandwidth utilisation, 0..1
    kLogGpuMem,     // log2 GPU memory footprint (GB)
    kNumFeatures
};

struct SoloFeatures {
    std::array<double, kNumFeatures> x{};
    std::uint32_t mask = 0;    // bit f set: feature f is known
    std::uint64_t family = 0;  // hash of the family name; 0 = unknown
    bool has(int f) const { return (mask >> f) & 1u; }
    void set(int f, double v) {
        x[static_cast<std::size_t>(f)] = v;
        mask |= 1u << f;
    }
};

// Features of `p` as run on `gpu_type` (empty: no GPU-specific throughput is used).
SoloFeatures solo_features(const JobProfile& p, const std::string& gpu_type);

std::uint64_t family_hash(const std::string& family);

}  // namespace coloc::model
