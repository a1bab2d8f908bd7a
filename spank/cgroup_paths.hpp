// Where a process's cgroups are: the mount points of the v1 devices hierarchy and of cgroup2
// (from /proc/self/mountinfo), and the process's path in each (from /proc/PID/cgroup).
#pragma once

#include <string>

namespace coloc::spank {

struct CgroupMounts {
    std::string v1_devices;  // e.g. /sys/fs/cgroup/devices; empty when not mounted
    std::string v2;          // e.g. /sys/fs/cgroup or /sys/fs/cgroup/unified; empty when not mounted
};

// From the text of /proc/self/mountinfo.
CgroupMounts cgroup_mounts_from(const std::string& mountinfo);

// The process's path in the v1 hierarchy that holds the devices controller ("devices" in the
// controller list), or in cgroup2 (the "0::" line), from the text of /proc/PID/cgroup; empty
// when there is none. Paths start with '/'.
std::string v1_devices_path_from(const std::string& proc_cgroup);
std::string v2_path_from(const std::string& proc_cgroup);

}  // namespace coloc::spank
