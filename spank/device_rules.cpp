#include "spank/device_rules.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>

namespace coloc::spank {

std::string v1_rule(const DeviceNumber& d) {
    return "c " + std::to_string(d.major) + ":" + std::to_string(d.minor) + " rwm";
}

std::vector<std::optional<DeviceNumber>> gpu_device_numbers(const std::string& prefix, int gpus, std::string& why) {
    std::vector<std::optional<DeviceNumber>> out;
    for (int i = 0; i < gpus; ++i) {
        const std::string path = prefix + std::to_string(i);
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) {
            if (why.empty()) why = path + " is not a character device";
            out.emplace_back();
            continue;
        }
        out.push_back(DeviceNumber{::major(st.st_rdev), ::minor(st.st_rdev)});
    }
    return out;
}

std::vector<DeviceNumber> denied_devices(const std::vector<std::optional<DeviceNumber>>& node_gpus,
                                         const std::vector<int>& given) {
    auto is_given = [&](int i) { return std::find(given.begin(), given.end(), i) != given.end(); };
    std::vector<DeviceNumber> own;
    for (int i = 0; i < static_cast<int>(node_gpus.size()); ++i)
        if (is_given(i) && node_gpus[i]) own.push_back(*node_gpus[i]);
    std::vector<DeviceNumber> out;
    for (int i = 0; i < static_cast<int>(node_gpus.size()); ++i) {
        const auto& d = node_gpus[i];
        if (!d || is_given(i)) continue;
        if (std::find(own.begin(), own.end(), *d) != own.end()) continue;
        if (std::find(out.begin(), out.end(), *d) == out.end()) out.push_back(*d);
    }
    return out;
}

}  // namespace coloc::spank
