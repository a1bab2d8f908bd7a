// A training job as the model sees it: what it does alone, and how it communicates.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace coloc::model {

// Every feature has a documented default (man/coloc-profiles.5); `known` records which were
// given, so a model can tell a measured 0 from a missing value.
struct JobProfile {
    std::string name = "default";  // catalogue key; also the job class
    std::string family;            // model family, e.g. "resnet50" (for nearest-type fallbacks)
    double batch_size = 0;         // 0 = unknown

    double iter_time_s = 0.25;  // solo iteration time
    double runtime_s = 0;       // solo runtime of a whole job, where a site declares one; 0 = unknown
    int gpus = 1;               // GPUs per node the job uses
    int nodes = 1;

    double sm_util = 0.6;        // 0..1, solo SM occupancy
    double mem_bw_util = 0.4;    // 0..1, solo memory-bandwidth (memory controller) utilisation
    double gpu_mem_gb = 8;       // GPU memory footprint per GPU
    double host_pressure = 0.1;  // 0..1, host CPU / memory bandwidth / PCIe (data loading)

    double comm_bytes = 0;     // bytes sent per iteration (gradient exchange)
    double comm_fraction = 0;  // share of the solo iteration spent communicating, 0..1
    double comm_period_s = 0;  // period of the bursts; 0 = iter_time_s

    // Measured solo throughput in iterations (steps) per second per GPU type ("k80", "p100",
    // "v100", ...), where known. Ratios between GPU types reveal how compute-bound a job is.
    std::map<std::string, double> solo_throughput;

    // Names of the features that were given rather than defaulted (looked up by any string
    // type: has() is on the prediction path, and a literal need not become a std::string).
    std::map<std::string, bool, std::less<>> known;

    int id = -1;  // interned index in a ProfileCatalogue; -1 when not interned
    // Set by ProfileCatalogue::intern, unique per interned profile and kept by copies of the
    // catalogue: a model tells its own profiles (and copies of them) by id and serial without
    // comparing names. 0 = never interned.
    std::uint64_t serial = 0;

    double period() const { return comm_period_s > 0 ? comm_period_s : iter_time_s; }
    bool has(std::string_view feature) const {
        auto it = known.find(feature);
        return it != known.end() && it->second;
    }
};

}  // namespace coloc::model
