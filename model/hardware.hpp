// The GPUs of a node type as the same-GPU term needs them: the GPU type names the measured pairs
// and learned parameters that apply, the memory decides whether two jobs' footprints fit on one.
// A cluster lists one per node type (place::gpu_hardware); Neighbour::hardware indexes that list.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model/gpu_share.hpp"

namespace coloc::model {

class InterferenceModel;

struct GpuHardware {
    std::string gpu_type = "v100";
    double memory_gb = 32;
    bool operator==(const GpuHardware&) const = default;
};

// Same-GPU kernel parameters learned per GPU type (colocctl fit --params-out), by GPU type.
using LearnedGpuParams = std::map<std::string, GpuShareParams>;

// The same-GPU parameters in each GPU type's parameters JSON text (ColocModel::params_json,
// colocctl fit --params-out). Throws std::invalid_argument naming the GPU type for a bad one.
LearnedGpuParams learned_gpu_params(const std::map<std::string, std::string>& json_by_type);

// Tells `model` the GPUs of each node type (index = node type) and the parameters learned per
// GPU type. A model without a same-GPU term ignores both. Returns one line per GPU type of
// `hardware` the model has no measured pairs for, saying what it falls back to.
std::vector<std::string> configure_hardware(InterferenceModel& model, const std::vector<GpuHardware>& hardware,
                                            const LearnedGpuParams& learned = {});

// The GPU types of `hardware`, each once, in order.
std::vector<std::string> gpu_types_of(const std::vector<GpuHardware>& hardware);

}  // namespace coloc::model
