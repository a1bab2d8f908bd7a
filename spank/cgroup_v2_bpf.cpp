#include "spank/cgroup_v2_bpf.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace coloc::spank {

namespace {

// struct bpf_cgroup_dev_ctx { u32 access_type (device type in the low 16 bits); u32 major; u32 minor; }
constexpr short kTypeOffset = 0;
constexpr short kMajorOffset = 4;
constexpr short kMinorOffset = 8;

bpf_insn insn(__u8 code, __u8 dst, __u8 src, __s16 off, __s32 imm) {
    bpf_insn i{};
    i.code = code;
    i.dst_reg = dst;
    i.src_reg = src;
    i.off = off;
    i.imm = imm;
    return i;
}

bpf_insn load_u32(__u8 dst, short offset) { return insn(BPF_LDX | BPF_W | BPF_MEM, dst, BPF_REG_1, offset, 0); }
bpf_insn jump_if_not(__u8 reg, __s32 value, __s16 skip) { return insn(BPF_JMP | BPF_JNE | BPF_K, reg, 0, skip, value); }
bpf_insn return_value(__s32 v) { return insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, v); }
bpf_insn exit_insn() { return insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0); }

long bpf(int cmd, bpf_attr& attr) { return ::syscall(__NR_bpf, cmd, &attr, sizeof(attr)); }

}  // namespace

std::vector<bpf_insn> device_program(const std::vector<DeviceNumber>& denied) {
    constexpr short kBlock = 4;  // instructions per denied device
    std::vector<bpf_insn> p;
    p.push_back(load_u32(BPF_REG_2, kTypeOffset));
    p.push_back(insn(BPF_ALU | BPF_AND | BPF_K, BPF_REG_2, 0, 0, 0xFFFF));
    p.push_back(load_u32(BPF_REG_4, kMajorOffset));
    p.push_back(load_u32(BPF_REG_5, kMinorOffset));
    // Not a character device: allowed (skip every block).
    p.push_back(jump_if_not(BPF_REG_2, BPF_DEVCG_DEV_CHAR, static_cast<__s16>(kBlock * denied.size())));
    for (const DeviceNumber& d : denied) {
        p.push_back(jump_if_not(BPF_REG_4, static_cast<__s32>(d.major), 3));  // to the next block
        p.push_back(jump_if_not(BPF_REG_5, static_cast<__s32>(d.minor), 2));
        p.push_back(return_value(0));
        p.push_back(exit_insn());
    }
    p.push_back(return_value(1));
    p.push_back(exit_insn());
    return p;
}

std::string attach_device_program(const std::string& cgroup_dir, const std::vector<DeviceNumber>& denied) {
    const std::vector<bpf_insn> program = device_program(denied);
    bpf_attr load{};
    load.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
    load.insns = reinterpret_cast<__u64>(program.data());
    load.insn_cnt = static_cast<__u32>(program.size());
    load.license = reinterpret_cast<__u64>("GPL");
    std::strncpy(load.prog_name, "coloc_devices", sizeof(load.prog_name) - 1);
    const long prog = bpf(BPF_PROG_LOAD, load);
    if (prog < 0) return std::string("loading the device program: ") + std::strerror(errno);
    const int dir = ::open(cgroup_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
        const int e = errno;
        ::close(static_cast<int>(prog));
        return "opening " + cgroup_dir + ": " + std::strerror(e);
    }
    bpf_attr attach{};
    attach.target_fd = static_cast<__u32>(dir);
    attach.attach_bpf_fd = static_cast<__u32>(prog);
    attach.attach_type = BPF_CGROUP_DEVICE;
    // No flags: the only program here, replaced if a later task of the step attaches the same.
    const long rc = bpf(BPF_PROG_ATTACH, attach);
    const int e = errno;
    ::close(dir);
    ::close(static_cast<int>(prog));
    if (rc < 0) return "attaching the device program to " + cgroup_dir + ": " + std::strerror(e);
    return {};
}

}  // namespace coloc::spank
