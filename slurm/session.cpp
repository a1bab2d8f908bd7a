#include "slurm/session.hpp"

#include <sys/stat.h>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

namespace coloc::slurm {

void init_libslurm() {
    const char* env = std::getenv("SLURM_CONF");
    const std::string path = env && *env ? env : "/etc/slurm/slurm.conf";
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) throw std::runtime_error("no slurm.conf at " + path + " (SLURM_CONF)");
    static std::once_flag once;
    std::call_once(once, [] { slurm_init(nullptr); });
}

std::string last_slurm_error() { return slurm_strerror(errno); }

}  // namespace coloc::slurm
