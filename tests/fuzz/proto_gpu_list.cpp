// Fuzz target: GPU lists as the plugin reads them from CUDA_VISIBLE_DEVICES and SLURM_*_GPUS.
// Only ProtoError may come out, and what parses prints back to a list that parses the same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "proto/errors.hpp"
#include "proto/messages.hpp"

using namespace coloc::proto;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    std::vector<int> gpus;
    try {
        gpus = parse_gpu_list(text);
    } catch (const ProtoError&) {
        return 0;
    }
    if (parse_gpu_list(gpu_list(gpus)) != gpus) std::abort();
    return 0;
}
