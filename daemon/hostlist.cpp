#include "daemon/hostlist.hpp"

#include <cstdlib>

extern "C" {
#include <slurm/slurm.h>
}

namespace coloc {

std::optional<std::vector<std::string>> expand_hostlist(const std::string& expr) {
    hostlist_t hl = slurm_hostlist_create(expr.c_str());
    if (!hl) return std::nullopt;
    std::vector<std::string> out;
    while (char* host = slurm_hostlist_shift(hl)) {
        out.emplace_back(host);
        std::free(host);
    }
    slurm_hostlist_destroy(hl);
    return out;
}

}  // namespace coloc
