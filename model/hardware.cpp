#include "model/hardware.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "model/coloc_model.hpp"

namespace coloc::model {

std::vector<std::string> gpu_types_of(const std::vector<GpuHardware>& hardware) {
    std::vector<std::string> types;
    for (const GpuHardware& h : hardware)
        if (std::find(types.begin(), types.end(), h.gpu_type) == types.end()) types.push_back(h.gpu_type);
    return types;
}

LearnedGpuParams learned_gpu_params(const std::map<std::string, std::string>& json_by_type) {
    LearnedGpuParams out;
    for (const auto& [type, text] : json_by_type) {
        ColocModel m;
        try {
            m.load_params_json(nlohmann::json::parse(text));
        } catch (const std::exception& e) {
            throw std::invalid_argument("parameters for GPU type " + type + ": " + e.what());
        }
        out[type] = m.params().gpu;
    }
    return out;
}

std::vector<std::string> configure_hardware(InterferenceModel& model, const std::vector<GpuHardware>& hardware,
                                            const LearnedGpuParams& learned) {
    auto* coloc = dynamic_cast<ColocModel*>(&model);
    if (!coloc) return {};
    coloc->set_hardware(hardware, learned);
    std::vector<std::string> notes;
    for (const std::string& type : gpu_types_of(hardware))
        if (std::string note = coloc->gpu_data_note(type); !note.empty()) notes.push_back(note);
    return notes;
}

}  // namespace coloc::model
