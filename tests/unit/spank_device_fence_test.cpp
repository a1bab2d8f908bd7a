#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>

#include "spank/cgroup_paths.hpp"
#include "spank/cgroup_v2_bpf.hpp"
#include "spank/device_fence.hpp"
#include "spank/device_rules.hpp"
#include "spank/plugin_args.hpp"
#include "spank/task_fence.hpp"

using namespace coloc::spank;

namespace {

std::optional<DeviceNumber> gpu(unsigned minor) { return DeviceNumber{195, minor}; }

// Runs a device program as the kernel would, for the few instructions device_program emits:
// 1 = allowed, 0 = refused.
int run_program(const std::vector<bpf_insn>& p, std::uint32_t type, std::uint32_t major, std::uint32_t minor) {
    const std::uint32_t ctx[3] = {type | (BPF_DEVCG_ACC_READ << 16), major, minor};
    std::uint64_t r[11] = {};
    for (std::size_t pc = 0; pc < p.size(); ++pc) {
        const bpf_insn& i = p[pc];
        if (i.code == (BPF_LDX | BPF_W | BPF_MEM)) {
            REQUIRE(i.src_reg == BPF_REG_1);
            REQUIRE(i.off % 4 == 0);
            r[i.dst_reg] = ctx[i.off / 4];
        } else if (i.code == (BPF_ALU | BPF_AND | BPF_K)) {
            r[i.dst_reg] = static_cast<std::uint32_t>(r[i.dst_reg] & static_cast<std::uint32_t>(i.imm));
        } else if (i.code == (BPF_JMP | BPF_JNE | BPF_K)) {
            if (r[i.dst_reg] != static_cast<std::uint64_t>(i.imm)) pc += static_cast<std::size_t>(i.off);
        } else if (i.code == (BPF_ALU64 | BPF_MOV | BPF_K)) {
            r[i.dst_reg] = static_cast<std::uint64_t>(i.imm);
        } else if (i.code == (BPF_JMP | BPF_EXIT)) {
            return static_cast<int>(r[0]);
        } else {
            FAIL("unexpected instruction code " << int(i.code));
        }
    }
    FAIL("the program ran off its end");
    return -1;
}

}  // namespace

TEST_CASE("device fence: the GPUs a bind step was not given are denied") {
    const std::vector<std::optional<DeviceNumber>> node = {gpu(0), gpu(1), gpu(2), gpu(3)};
    CHECK(denied_devices(node, {1}) == std::vector<DeviceNumber>{{195, 0}, {195, 2}, {195, 3}});
    CHECK(denied_devices(node, {0, 3}) == std::vector<DeviceNumber>{{195, 1}, {195, 2}});
    CHECK(denied_devices(node, {0, 1, 2, 3}).empty());
    CHECK(denied_devices(node, {}).size() == 4);
    // A GPU whose device is unknown cannot be denied; a device shared with a given GPU is not denied.
    CHECK(denied_devices({gpu(0), std::nullopt, gpu(2)}, {0}) == std::vector<DeviceNumber>{{195, 2}});
    CHECK(denied_devices({gpu(0), gpu(0), gpu(2)}, {1}) == std::vector<DeviceNumber>{{195, 2}});
    CHECK(v1_rule({195, 3}) == "c 195:3 rwm");
    CHECK(fence_name("n1", 42, 4294967291u, 77) == "coloc_n1_42_4294967291_77");
    CHECK(fence_name("a.b/c", 1, 0, 5) == "coloc_a_b_c_1_0_5");
}

TEST_CASE("device fence: fences whose slurmstepd is gone are swept, others are left") {
    namespace fs = std::filesystem;
    const fs::path parent = fs::temp_directory_path() / ("coloc-sweep-" + std::to_string(::getpid()));
    fs::remove_all(parent);
    fs::create_directories(parent);
    // A pid that names no process: a child that has been reaped.
    const pid_t gone = ::fork();
    if (gone == 0) ::_exit(0);
    REQUIRE(gone > 0);
    int status = 0;
    REQUIRE(::waitpid(gone, &status, 0) == gone);
    const std::string live = fence_name("n1", 7, 0, ::getpid()), stale = fence_name("n1", 6, 0, gone),
                      busy = fence_name("n2", 5, 0, gone);
    for (const std::string& n : {live, stale, busy, std::string("other_1"), std::string("coloc_x")})
        fs::create_directory(parent / n);
    std::ofstream(parent / busy / "task") << "a cgroup with a process in it is not empty either";
    CHECK(sweep_stale_fences(parent.string()) == 1);
    CHECK(fs::exists(parent / live));
    CHECK_FALSE(fs::exists(parent / stale));
    CHECK(fs::exists(parent / busy));  // rmdir takes only empty ones
    CHECK(fs::exists(parent / "other_1"));
    CHECK(fs::exists(parent / "coloc_x"));
    CHECK(sweep_stale_fences((parent / "missing").string()) == 0);
    fs::remove_all(parent);
}

TEST_CASE("device fence: GPU device numbers come from the device files") {
    const auto dir = std::filesystem::temp_directory_path() / ("coloc-fence-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "nvidia1") << "a plain file\n";
    std::string why;
    const auto found = gpu_device_numbers("/dev/null-is-no-prefix", 1, why);
    CHECK(found.size() == 1);
    CHECK_FALSE(found[0].has_value());
    CHECK(why == "/dev/null-is-no-prefix0 is not a character device");
    why.clear();
    const auto plain = gpu_device_numbers((dir / "nvidia").string(), 2, why);
    CHECK_FALSE(plain[1].has_value());
    CHECK(why.find("nvidia0 is not a character device") != std::string::npos);
    // A link to /dev/null (c 1 3) stands in for a GPU's character device.
    std::filesystem::create_symlink("/dev/null", dir / "gpu0");
    why.clear();
    const auto linked = gpu_device_numbers((dir / "gpu").string(), 1, why);
    CHECK(why.empty());
    CHECK(linked[0] == std::optional<DeviceNumber>(DeviceNumber{1, 3}));
    std::filesystem::remove_all(dir);
}

TEST_CASE("device fence: cgroup mounts and a process's cgroups") {
    const std::string mountinfo =
        "30 23 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n"
        "35 30 0:31 / /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw\n"
        "38 30 0:34 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
        "41 30 0:37 / /sys/fs/cgroup/devices rw - cgroup cgroup rw,devices\n"
        "90 41 0:37 /slurm /mnt/devices-bind rw - cgroup cgroup rw,devices\n";
    const CgroupMounts m = cgroup_mounts_from(mountinfo);
    CHECK(m.v1_devices == "/sys/fs/cgroup/devices");
    CHECK(m.v2 == "/sys/fs/cgroup/unified");
    CHECK(cgroup_mounts_from("25 1 0:22 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n").v1_devices.empty());
    const std::string proc = "12:devices:/slurm/uid_0/job_7/step_0/task_0\n4:cpu,cpuacct:/x\n0::/system.slice\n";
    CHECK(v1_devices_path_from(proc) == "/slurm/uid_0/job_7/step_0/task_0");
    CHECK(v2_path_from(proc) == "/system.slice");
    CHECK(v1_devices_path_from("0::/\n").empty());
    CHECK(v2_path_from("5:devices:/\n").empty());
}

TEST_CASE("device fence: the cgroup v2 device program refuses exactly the denied devices") {
    const std::vector<DeviceNumber> denied = {{195, 0}, {195, 2}};
    const auto p = device_program(denied);
    CHECK(run_program(p, BPF_DEVCG_DEV_CHAR, 195, 0) == 0);
    CHECK(run_program(p, BPF_DEVCG_DEV_CHAR, 195, 2) == 0);
    CHECK(run_program(p, BPF_DEVCG_DEV_CHAR, 195, 1) == 1);
    CHECK(run_program(p, BPF_DEVCG_DEV_CHAR, 195, 255) == 1);
    CHECK(run_program(p, BPF_DEVCG_DEV_CHAR, 1, 3) == 1);
    CHECK(run_program(p, BPF_DEVCG_DEV_CHAR, 194, 0) == 1);
    CHECK(run_program(p, BPF_DEVCG_DEV_BLOCK, 195, 0) == 1);  // a block device with the same numbers
    CHECK(run_program(device_program({}), BPF_DEVCG_DEV_CHAR, 195, 0) == 1);
}

TEST_CASE("device fence: which steps are fenced, and the isolate= policy") {
    JobFacts facts;
    facts.job_id = 9;
    facts.node = "n1";
    Outcome bind;
    bind.set_devices = true;
    bind.gpus = {1};
    PluginConfig c;
    c.gpus = 2;
    c.gpu_devices = "/nonexistent/nvidia";
    StepFence fence;

    // A narrow step (Slurm named its GPUs), or one coloc gave no GPUs, is Slurm's to constrain.
    JobFacts narrow = facts;
    narrow.slurm_gpus = {0, 1};
    CHECK(fence_task(c, narrow, 0, bind, 1, fence).error.empty());
    CHECK(fence_task(c, facts, 0, Outcome{}, 1, fence).error.empty());
    CHECK_FALSE(fence.failure_logged);

    // A bind step that cannot be fenced runs, and says so once per step.
    TaskFenceResult r = fence_task(c, facts, 0, bind, 1, fence);
    CHECK_FALSE(r.refuse);
    CHECK(r.error == "job 9: GPUs 1 not fenced: /nonexistent/nvidia0 is not a character device; running unfenced");
    r = fence_task(c, facts, 0, bind, 2, fence);
    CHECK(r.error.empty());
    CHECK_FALSE(r.refuse);

    // isolate=required refuses the launch; isolate=off fences nothing and says nothing.
    c.isolate = PluginConfig::Isolate::Required;
    StepFence required;
    r = fence_task(c, facts, 0, bind, 1, required);
    CHECK(r.refuse);
    CHECK(r.error.find("launch refused (isolate=required)") != std::string::npos);
    c.isolate = PluginConfig::Isolate::Off;
    StepFence off;
    r = fence_task(c, facts, 0, bind, 1, off);
    CHECK_FALSE(r.refuse);
    CHECK(r.error.empty());

    // Without gpus= the node's GPUs are unknown.
    c.isolate = PluginConfig::Isolate::On;
    c.gpus = 0;
    StepFence unknown;
    CHECK(fence_task(c, facts, 0, bind, 1, unknown).error.find("gpus= is needed") != std::string::npos);
}

TEST_CASE("device fence: plugstack arguments") {
    ParsedArgs a =
        parse_plugin_args(std::vector<std::string>{"isolate=required", "device_cgroup=v2", "gpu_devices=/x/gpu"});
    CHECK(a.errors.empty());
    CHECK(a.config.isolate == PluginConfig::Isolate::Required);
    CHECK(a.config.device_cgroup == DeviceCgroup::V2);
    CHECK(a.config.gpu_devices == "/x/gpu");
    CHECK(parse_plugin_args(std::vector<std::string>{}).config.isolate == PluginConfig::Isolate::On);
    a = parse_plugin_args(std::vector<std::string>{"isolate=maybe", "device_cgroup=v3", "gpu_devices=rel"});
    CHECK(join_errors(a.errors) ==
          "isolate=maybe (expected on, off or required); device_cgroup=v3 (expected auto, v1 or v2); "
          "gpu_devices=rel (expected an absolute path prefix)");
    CHECK(a.config.isolate == PluginConfig::Isolate::On);
}
