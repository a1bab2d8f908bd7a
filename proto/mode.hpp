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

// What a step's mode is decided from, in the order they count, at either end: the plugin has
// no site rules and leaves `site` and `otherwise` unset; colocd knows them all.
struct ModeInputs {
    std::optional<GpuMode> asked = {};    // the plugin's mode= or the place request's; nullopt: auto
    std::optional<GpuMode> site = {};     // colocd.yaml's mode for the node, else for the partition
    bool slurm_named_gpus = false;        // Slurm gave the step GPUs by index (gres/gpu)
    bool bind_slots = false;              // the job has count-only bind slots, or they are to be looked up
    GpuMode otherwise = GpuMode::Narrow;  // colocd.yaml's default mode
};

// The mode a step is placed in: the one asked for; else the site's; else narrow where Slurm
// named GPUs, bind where there are bind slots; else `otherwise`.
GpuMode decide_mode(const ModeInputs& in);

}  // namespace coloc::proto
