// Gavel's measured throughputs (stanford-futuredata/gavel, MIT) as coloc measurements:
//   {gpu_type: {"('<job type>', <scale factor>)": {"null": solo, "('<other>', 1)": [this, other]}}}
// Only scale factor 1 has pairs; "[0.0, 0.0]" (could not co-run) and zero solo throughputs
// are left out; the *_unconsolidated GPU types are skipped. Job types get catalogue names
// ("ResNet-18 (batch size 16)" -> resnet18-b16, family resnet18).
#pragma once

#include <string>

#include "model/measurements.hpp"

namespace coloc::model::io {

Measurements measurements_from_gavel_json(const std::string& json_text, const std::string& source);
Measurements read_gavel_json(const std::string& path);

// "ResNet-18 (batch size 16)" -> {"resnet18-b16", "resnet18", 16}; "A3C" -> {"a3c", "a3c", 0}.
struct GavelJobName {
    std::string name;
    std::string family;
    double batch_size = 0;
};
GavelJobName gavel_job_name(const std::string& job_type);

}  // namespace coloc::model::io
