// cgroup v2 has no devices controller: a BPF_PROG_TYPE_CGROUP_DEVICE program attached to the
// cgroup decides each open and mknod. The program is built here from raw instructions and loaded
// with the bpf() syscall, so the plugin needs no BPF library or compiler.
#pragma once

#include <linux/bpf.h>

#include <string>
#include <vector>

#include "spank/device_rules.hpp"

namespace coloc::spank {

// A program that refuses (returns 0) every access to the character devices `denied` and allows
// (returns 1) everything else.
std::vector<bpf_insn> device_program(const std::vector<DeviceNumber>& denied);

// Loads device_program(denied) and attaches it to the cgroup directory `cgroup_dir`; the
// attachment lives as long as the cgroup. Empty on success, else why not.
std::string attach_device_program(const std::string& cgroup_dir, const std::vector<DeviceNumber>& denied);

}  // namespace coloc::spank
