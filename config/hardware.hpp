// colocd.yaml's hardware: each node type's GPU type and memory (`gpu_type`, `gpu_memory_gb`)
// and the same-GPU parameters learned per GPU type (`model_params`).
#pragma once

#include <string>
#include <vector>

#include "config/config.hpp"
#include "config/reader.hpp"

namespace coloc::daemon {

// Reads node type `t`'s gpu_type and gpu_memory_gb into `nt`; a type that names neither gets
// the model's defaults, with a line in `notes` saying so.
void read_node_type_gpus(const Reader& r, const YAML::Node& t, const std::string& key, place::NodeType& nt,
                         std::vector<std::string>& notes);

// model_params: {GPU type: parameters file}. Each file is read now (colocctl fit --params-out's
// JSON, written for that GPU type), so that a bad one stops colocd at start with the line.
void read_model_params(const Reader& r, const YAML::Node& params, Config& cfg);

}  // namespace coloc::daemon
