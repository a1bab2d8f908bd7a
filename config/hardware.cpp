#include "config/hardware.hpp"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/files.hpp"

namespace coloc::daemon {

namespace {

// Lower-case letters, digits, '-' and '_': the spelling of GPU types in profiles and pair data.
bool plain_gpu_type(const std::string& t) {
    return !t.empty() && t.size() <= 32 &&
           t.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_") == std::string::npos;
}

std::string gpu_type_at(const Reader& r, const YAML::Node& n, const std::string& key) {
    const std::string t = r.str(n, key);
    if (!plain_gpu_type(t))
        r.fail(n, key, "'" + t + "' is not a GPU type (lower-case letters, digits, '-' or '_', as in v100, a100-80gb)");
    return t;
}

}  // namespace

void read_node_type_gpus(const Reader& r, const YAML::Node& t, const std::string& key, place::NodeType& nt,
                         std::vector<std::string>& notes) {
    const model::GpuHardware fallback;
    if (t["gpu_type"]) nt.gpu.gpu_type = gpu_type_at(r, t["gpu_type"], key + ".gpu_type");
    if (t["gpu_memory_gb"]) nt.gpu.memory_gb = r.number(t["gpu_memory_gb"], key + ".gpu_memory_gb", 0.5, 65536);
    std::string missing;
    if (!t["gpu_type"]) missing = "gpu_type";
    if (!t["gpu_memory_gb"]) missing += std::string(missing.empty() ? "" : " and ") + "gpu_memory_gb";
    if (!missing.empty() && nt.gpus > 0) {
        std::ostringstream o;
        o << r.file() << ": node type '" << nt.name << "' names no " << missing << ": " << nt.gpu.gpu_type << " with "
          << nt.gpu.memory_gb << " GB assumed";
        notes.push_back(o.str());
    }
}

void read_model_params(const Reader& r, const YAML::Node& params, Config& cfg) {
    if (!params.IsMap()) r.fail(params, "model_params", "expected a mapping of GPU type to a parameters file");
    const auto& types = cfg.topology.types();
    for (const auto& kv : params) {
        const std::string type = gpu_type_at(r, kv.first, "model_params");
        const std::string key = "model_params." + type;
        if (std::none_of(types.begin(), types.end(), [&](const place::NodeType& t) { return t.gpu.gpu_type == type; }))
            r.fail(kv.first, key, "no node type has gpu_type '" + type + "'");
        const std::string path = r.str(kv.second, key);
        std::ifstream in;
        if (auto why = base::open_for_reading(in, path); !why.empty()) r.fail(kv.second, key, path + ": " + why);
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(in);
        } catch (const nlohmann::json::exception& e) {
            r.fail(kv.second, key, path + ": not JSON: " + e.what());
        }
        const auto written_for = j.is_object() ? j.find("gpu_type") : j.end();
        if (written_for == j.end() || !written_for->is_string())
            r.fail(kv.second, key, path + ": names no gpu_type (not written by colocctl fit --params-out?)");
        if (*written_for != type)
            r.fail(kv.second, key,
                   path + ": parameters fitted for GPU type '" + written_for->get<std::string>() + "', not '" + type +
                       "' (colocctl fit --gpu-type " + type + ")");
        cfg.model_params[type] = j.dump();
        cfg.model_params_files[type] = path;
    }
}

}  // namespace coloc::daemon
