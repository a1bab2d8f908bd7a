// Which device numbers a bind-mode step must not open: every GPU of the node that coloc did not
// give it (colocd's choice, a local fallback choice, or a --coloc=off job's own slots). Pure, so
// that unit tests can check the rules without a cgroup.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace coloc::spank {

struct DeviceNumber {
    unsigned major = 0;
    unsigned minor = 0;
    bool operator==(const DeviceNumber&) const = default;
};

// "c 195:3 rwm": one rule of the cgroup v1 devices controller (devices.deny).
std::string v1_rule(const DeviceNumber& d);

// The character devices of the node's GPUs, by index: the device file `prefix`<i> for each
// i < gpus (e.g. /dev/nvidia0). A GPU whose file is missing or not a character device is nullopt,
// with one clause about it in `why`.
std::vector<std::optional<DeviceNumber>> gpu_device_numbers(const std::string& prefix, int gpus, std::string& why);

// The devices of node GPUs not in `given`, in index order. A GPU with an unknown device number
// cannot be denied and is left out; a device number shared with a given GPU (two names for one
// device) is left out too, since denying it would take the job's own GPU away.
std::vector<DeviceNumber> denied_devices(const std::vector<std::optional<DeviceNumber>>& node_gpus,
                                         const std::vector<int>& given);

}  // namespace coloc::spank
