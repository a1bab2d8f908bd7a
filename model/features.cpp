#include "model/features.hpp"

#include <cmath>

namespace coloc::model {

std::uint64_t family_hash(const std::string& family) {
    if (family.empty()) return 0;
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a: stable across runs, unlike std::hash
    for (unsigned char c : family) h = (h ^ c) * 1099511628211ull;
    return h == 0 ? 1 : h;
}

namespace {
double throughput(const JobProfile& p, const char* gpu) {
    auto it = p.solo_throughput.find(gpu);
    return it == p.solo_throughput.end() ? 0.0 : it->second;
}
}  // namespace

SoloFeatures solo_features(const JobProfile& p, const std::string& gpu_type) {
    SoloFeatures f;
    f.family = family_hash(p.family);
    if (p.batch_size > 0) f.set(kLogBatch, std::log2(p.batch_size));
    const double k80 = throughput(p, "k80"), p100 = throughput(p, "p100"), v100 = throughput(p, "v100");
    if (k80 > 0 && v100 > 0) f.set(kRatioV100K80, std::log(v100 / k80));
    if (k80 > 0 && p100 > 0) f.set(kRatioP100K80, std::log(p100 / k80));
    double thr = 0;
    if (!gpu_type.empty()) {
        auto it = p.solo_throughput.find(gpu_type);
        if (it != p.solo_throughput.end()) thr = it->second;
    }
    if (thr > 0)
        f.set(kLogIterTime, -std::log(thr));
    else if (p.has("iter_time_s") && p.iter_time_s > 0)
        f.set(kLogIterTime, std::log(p.iter_time_s));
    if (p.has("sm_util")) f.set(kSmUtil, p.sm_util);
    if (p.has("mem_bw_util")) f.set(kMemBwUtil, p.mem_bw_util);
    if (p.has("gpu_mem_gb") && p.gpu_mem_gb > 0) f.set(kLogGpuMem, std::log2(p.gpu_mem_gb));
    return f;
}

}  // namespace coloc::model
