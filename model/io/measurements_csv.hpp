// The measurement file of `colocctl fit` and bench/model-accuracy (man/coloc-profiles.5):
//   job,family,batch_size,gpu_type,neighbour,where,throughput
// one solo row (empty neighbour) per job and GPU type, one row per job measured beside a
// neighbour. Errors name the file and line.
#pragma once

#include <iosfwd>
#include <stdexcept>
#include <string>

#include "model/measurements.hpp"

namespace coloc::model::io {

struct MeasurementError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

Measurements read_measurements_csv(const std::string& path);
Measurements parse_measurements_csv(std::istream& in, const std::string& source);
void write_measurements_csv(std::ostream& out, const Measurements& m);

}  // namespace coloc::model::io
