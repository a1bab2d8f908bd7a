// A table of solo and co-located measurements, as `colocctl fit` and bench/model-accuracy read
// it (file format: man/coloc-profiles.5, MEASUREMENTS). Pure data plus the step that turns it
// into catalogue profiles and measured pairs.
#pragma once

#include <string>
#include <vector>

#include "model/catalogue.hpp"
#include "model/model.hpp"

namespace coloc::model {

struct SoloMeasurement {
    std::string job;
    std::string family;
    double batch_size = 0;  // 0 = unknown
    std::string gpu_type;
    double throughput = 0;  // iterations per second, alone
    int line = 0;           // where it came from, for messages
};

struct PairMeasurement {
    std::string job;
    std::string neighbour;
    std::string gpu_type;
    Sharing where = Sharing::Gpu;
    double throughput = 0;  // the job's iterations per second beside the neighbour
    int line = 0;
};

struct Measurements {
    std::vector<SoloMeasurement> solo;
    std::vector<PairMeasurement> pairs;
    std::string source;  // the file they came from, for messages ("" = none)
};

// Profiles (family, batch size, solo throughput per GPU type, iteration time on the fastest
// GPU type measured) and same-GPU pairs normalised by the job's solo throughput. Pairs whose
// job has no solo row on that GPU type are skipped, as are pairs measured at 0 (cannot co-run).
// Throws std::invalid_argument ("SOURCE:LINE: reason") when a pair names a job with no solo row
// at all, or when a pair's speed (its throughput over the job's solo throughput) breaks the
// rule every catalogue keeps (pair_speed_problem).
ProfileCatalogue catalogue_from(const Measurements& m);

// Normalised speed of a co-located measurement, or NaN when the job's solo throughput on that
// GPU type is unknown.
double normalised_speed(const Measurements& m, const PairMeasurement& p);

}  // namespace coloc::model
