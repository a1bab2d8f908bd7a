// One libslurm per process: colocd asks slurmctld from two places (reconciliation and node
// steering), and both start here.
#pragma once

#include <string>

namespace coloc::slurm {

// Reads slurm.conf (SLURM_CONF, else /etc/slurm/slurm.conf) once per process. libslurm ends the
// process when it cannot read its configuration, so this looks first and throws
// std::runtime_error naming the file instead.
void init_libslurm();

// Why the last libslurm call failed. libslurm reports through errno on every release (24.11
// removed slurm_get_errno(), which only returned errno): read it right after the failing call.
std::string last_slurm_error();

}  // namespace coloc::slurm
