#include "spank/gpu_env.hpp"

#include <sys/wait.h>
#include <algorithm>
#include <charconv>

#include "base/limits.hpp"
#include "proto/messages.hpp"

namespace coloc::spank {

namespace {

bool parse_index(const std::string& text, std::size_t from, std::size_t to, int& out) {
    if (from >= to) return false;
    auto [end, ec] = std::from_chars(text.data() + from, text.data() + to, out);
    return ec == std::errc() && end == text.data() + to && out >= 0 && out <= base::kMaxGpuIndex;
}

}  // namespace

std::vector<int> parse_index_list(const std::string& text) {
    std::vector<int> out;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t comma = text.find(',', pos);
        if (comma == std::string::npos) comma = text.size();
        std::size_t dash = text.find('-', pos);
        int a = 0, b = 0;
        if (dash != std::string::npos && dash < comma) {
            if (!parse_index(text, pos, dash, a) || !parse_index(text, dash + 1, comma, b) || b < a) return {};
            for (int g = a; g <= b; ++g) out.push_back(g);
        } else {
            if (!parse_index(text, pos, comma, a)) return {};
            out.push_back(a);
        }
        if (out.size() > 64) return {};
        pos = comma + 1;
    }
    return out;
}

std::vector<int> slurm_gpus_from(const std::string& step_gpus, const std::string& job_gpus,
                                 const std::string& cuda_visible, const std::string& coloc_decision) {
    for (const std::string* s : {&step_gpus, &job_gpus}) {
        std::vector<int> v = parse_index_list(*s);
        if (!v.empty()) return v;
    }
    if (!coloc_decision.empty()) return {};
    return parse_index_list(cuda_visible);
}

std::string visible_devices_for(const std::vector<int>& chosen, const std::vector<int>& slurm_gpus,
                                const std::vector<int>& cuda_visible) {
    const bool renumbered =
        !slurm_gpus.empty() && cuda_visible.size() == slurm_gpus.size() && cuda_visible != slurm_gpus;
    std::vector<int> out;
    for (int g : chosen) {
        if (renumbered) {
            auto it = std::find(slurm_gpus.begin(), slurm_gpus.end(), g);
            if (it == slurm_gpus.end()) continue;
            out.push_back(cuda_visible[static_cast<std::size_t>(it - slurm_gpus.begin())]);
        } else {
            out.push_back(g);
        }
    }
    return proto::gpu_list(out);
}

std::vector<int> intersect(const std::vector<int>& chosen, const std::vector<int>& allowed) {
    std::vector<int> out;
    for (int g : chosen)
        if (std::find(allowed.begin(), allowed.end(), g) != allowed.end() &&
            std::find(out.begin(), out.end(), g) == out.end())
            out.push_back(g);
    return out;
}

int exit_code_from_wait_status(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return status;
}

}  // namespace coloc::spank
