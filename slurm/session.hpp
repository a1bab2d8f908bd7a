// One libslurm per process: colocd asks slurmctld from two places (reconciliation and node
// steering), and both start here.
#pragma once

namespace coloc::slurm {

// Reads slurm.conf (SLURM_CONF, else /etc/slurm/slurm.conf) once per process. libslurm ends the
// process when it cannot read its configuration, so this looks first and throws
// std::runtime_error naming the file instead.
void init_libslurm();

}  // namespace coloc::slurm
