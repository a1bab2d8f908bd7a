// Limits that several libraries check input against: the wire protocol, Slurm's GRES strings and
// the plugin's environment all name GPUs by index.
#pragma once

namespace coloc::base {

// The highest GPU index accepted anywhere (a node's GPUs are 0..kMaxGpuIndex).
inline constexpr int kMaxGpuIndex = 1023;

}  // namespace coloc::base
