// Each node type's GPUs, told to the model at start: the same-GPU term of a node uses its GPU
// type's measured pairs and learned parameters, and its memory decides whether two jobs fit.
#include <sstream>

#include "daemon/log.hpp"
#include "daemon/service/service.hpp"

namespace coloc::daemon {

using proto::json;

std::vector<std::string> Service::init_hardware() {
    std::vector<std::string> notes = cfg_.notes;
    for (const std::string& n : model::configure_hardware(*model_, place::gpu_hardware(cfg_.topology),
                                                          model::learned_gpu_params(cfg_.model_params)))
        notes.push_back(n);
    for (const auto& [type, file] : cfg_.model_params_files)
        log_info("same-GPU parameters for " + type + " loaded from " + file);
    for (const std::string& n : notes) log_info("warning: " + n);
    return notes;
}

// One line per node type, "gpu8: a100, 80 GB, parameters from FILE", and the fallbacks.
void Service::hardware_status(json& status) const {
    json types = json::array();
    for (const place::NodeType& t : cfg_.topology.types()) {
        std::ostringstream o;
        o << t.name << ": " << t.gpu.gpu_type << ", " << t.gpu.memory_gb << " GB";
        if (auto it = cfg_.model_params_files.find(t.gpu.gpu_type); it != cfg_.model_params_files.end())
            o << ", parameters from " << it->second;
        types.push_back(o.str());
    }
    status["gpu_hardware"] = types;
    status["warnings"] = hardware_notes_;
}

}  // namespace coloc::daemon
