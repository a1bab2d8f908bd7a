// How a job's GPUs are treated, one name for each in colocd.yaml, plugstack.conf and on the wire:
//   bind     colocd chooses GPUs for a job that asked for count-only slots
//   narrow   colocd chooses a subset of the GPUs Slurm gave the job
//   observe  Slurm's GPUs are kept; colocd only records the job
// The plugin and a place request may also say "auto" (no mode: colocd decides), kept as nullopt.
#pragma once

#include <optional>
#include <string_view>

namespace coloc::proto {

enum class GpuMode { Bind, Narrow, Observe };

inline constexpr const char* kAutoMode = "auto";

// "bind", "narrow" or "observe"; "auto" for nullopt.
const char* mode_name(GpuMode mode);
const char* mode_name(std::optional<GpuMode> mode);

// The mode a name gives; nullopt for any other text, "auto" included.
std::optional<GpuMode> parse_mode(std::string_view name);

}  // namespace coloc::proto
