#include "spank/device_fence.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "spank/cgroup_paths.hpp"
#include "spank/cgroup_v2_bpf.hpp"

namespace coloc::spank {

namespace {

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// One write(2) per value, as cgroup files take them; empty on success.
std::string write_value(const std::string& path, const std::string& value) {
    std::ofstream out(path);
    if (!out) return "opening " + path + ": " + std::strerror(errno);
    out << value << std::flush;
    if (!out) return "writing '" + value + "' to " + path + ": " + std::strerror(errno);
    return {};
}

std::string make_dir(const std::string& dir) {
    if (::mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST) return {};
    return "creating " + dir + ": " + std::strerror(errno);
}

std::string join(const std::string& mount, const std::string& rel, const std::string& name) {
    std::string parent = mount + (rel == "/" ? std::string() : rel);
    return parent + "/" + name;
}

}  // namespace

std::string fence_name(const std::string& node, std::int64_t job_id, std::uint32_t step, pid_t stepd) {
    std::string safe;
    for (char c : node) safe += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
    return "coloc_" + safe + "_" + std::to_string(job_id) + "_" + std::to_string(step) + "_" + std::to_string(stepd);
}

FenceResult fence_process(DeviceCgroup which, const FenceTarget& t) {
    FenceResult r;
    const CgroupMounts mounts = cgroup_mounts_from(read_text("/proc/self/mountinfo"));
    const bool v1 = which == DeviceCgroup::V1 || (which == DeviceCgroup::Auto && !mounts.v1_devices.empty());
    const std::string mount = v1 ? mounts.v1_devices : mounts.v2;
    if (mount.empty()) {
        r.error = v1 ? "no cgroup v1 devices controller is mounted" : "no cgroup2 hierarchy is mounted";
        return r;
    }
    const std::string proc = read_text("/proc/" + std::to_string(t.pid) + "/cgroup");
    const std::string rel = v1 ? v1_devices_path_from(proc) : v2_path_from(proc);
    if (rel.empty() || rel[0] != '/') {
        r.error = "task " + std::to_string(t.pid) + " is in no " + (v1 ? "devices" : "cgroup2") + " cgroup";
        return r;
    }
    const std::string dir = join(mount, rel, fence_name(t.node, t.job_id, t.step, t.stepd));
    // The step's first task makes its fence, and sweeps the stale ones beside it once per step.
    if (::mkdir(dir.c_str(), 0755) == 0) sweep_stale_fences(dir.substr(0, dir.rfind('/')));
    if ((r.error = make_dir(dir)).empty()) r.dir = dir;
    if (!r.error.empty()) return r;
    if (v1) {
        for (const DeviceNumber& d : t.denied)
            if (!(r.error = write_value(dir + "/devices.deny", v1_rule(d))).empty()) return r;
    } else if (!(r.error = attach_device_program(dir, t.denied)).empty()) {
        return r;
    }
    r.error = write_value(dir + "/cgroup.procs", std::to_string(t.pid));
    return r;
}

void remove_fence(const std::string& dir) {
    if (!dir.empty()) ::rmdir(dir.c_str());
}

int sweep_stale_fences(const std::string& parent) {
    DIR* d = ::opendir(parent.c_str());
    if (!d) return 0;
    int removed = 0;
    while (const dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name.rfind("coloc_", 0) != 0) continue;
        const std::size_t last = name.rfind('_');
        const std::string pid_text = name.substr(last + 1);
        if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos) continue;
        const long pid = std::strtol(pid_text.c_str(), nullptr, 10);
        if (pid <= 0 || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
        if (::rmdir((parent + "/" + name).c_str()) == 0) ++removed;
    }
    ::closedir(d);
    return removed;
}

}  // namespace coloc::spank
