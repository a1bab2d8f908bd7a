#include "spank/cgroup_paths.hpp"

#include <sstream>
#include <vector>

namespace coloc::spank {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::string part;
    std::istringstream in(s);
    while (std::getline(in, part, sep)) out.push_back(part);
    return out;
}

bool has_option(const std::string& options, const std::string& want) {
    for (const auto& o : split(options, ','))
        if (o == want) return true;
    return false;
}

}  // namespace

CgroupMounts cgroup_mounts_from(const std::string& mountinfo) {
    CgroupMounts m;
    std::istringstream in(mountinfo);
    std::string line;
    while (std::getline(in, line)) {
        // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS
        const auto dash = line.find(" - ");
        if (dash == std::string::npos) continue;
        const auto head = split(line.substr(0, dash), ' ');
        const auto tail = split(line.substr(dash + 3), ' ');
        if (head.size() < 5 || tail.size() < 3) continue;
        if (head[3] != "/") continue;  // a bind mount of a sub-cgroup (a container's view): not the root
        if (tail[0] == "cgroup2" && m.v2.empty()) m.v2 = head[4];
        if (tail[0] == "cgroup" && m.v1_devices.empty() && has_option(tail[2], "devices")) m.v1_devices = head[4];
    }
    return m;
}

std::string v1_devices_path_from(const std::string& proc_cgroup) {
    std::istringstream in(proc_cgroup);
    std::string line;
    while (std::getline(in, line)) {
        // ID:CONTROLLERS:PATH
        const auto a = line.find(':');
        const auto b = a == std::string::npos ? a : line.find(':', a + 1);
        if (b == std::string::npos) continue;
        if (has_option(line.substr(a + 1, b - a - 1), "devices")) return line.substr(b + 1);
    }
    return {};
}

std::string v2_path_from(const std::string& proc_cgroup) {
    std::istringstream in(proc_cgroup);
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("0::", 0) == 0) return line.substr(3);
    return {};
}

}  // namespace coloc::spank
