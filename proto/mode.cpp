#include "proto/mode.hpp"

#include <utility>

namespace coloc::proto {

namespace {

constexpr std::pair<GpuMode, const char*> kNames[] = {
    {GpuMode::Bind, "bind"},
    {GpuMode::Narrow, "narrow"},
    {GpuMode::Observe, "observe"},
};

}  // namespace

const char* mode_name(GpuMode mode) {
    for (const auto& [m, name] : kNames)
        if (m == mode) return name;
    return "narrow";  // not reached: every mode has a name
}

const char* mode_name(std::optional<GpuMode> mode) { return mode ? mode_name(*mode) : kAutoMode; }

std::optional<GpuMode> parse_mode(std::string_view name) {
    for (const auto& [m, n] : kNames)
        if (name == n) return m;
    return std::nullopt;
}

GpuMode decide_mode(const ModeInputs& in) {
    if (in.asked) return *in.asked;
    if (in.site) return *in.site;
    if (in.slurm_named_gpus) return GpuMode::Narrow;
    if (in.bind_slots) return GpuMode::Bind;
    return in.otherwise;
}

}  // namespace coloc::proto
