// The SPANK API as this plugin uses it. libslurm.so does not export the spank_* functions: the
// programs that load the plugin (slurmstepd, srun, sbatch, through libslurmfull) do. Declaring
// them weak lets the plugin link with -z defs (every other symbol must resolve at link time)
// and resolve these from the host at load time; spank_api_available() checks they did.
#pragma once

extern "C" {
#include <slurm/spank.h>
}

extern "C" {
spank_context_t spank_context(void) __attribute__((weak));
int spank_remote(spank_t spank) __attribute__((weak));
spank_err_t spank_option_register(spank_t spank, struct spank_option* opt) __attribute__((weak));
spank_err_t spank_get_item(spank_t spank, spank_item_t item, ...) __attribute__((weak));
spank_err_t spank_getenv(spank_t spank, const char* var, char* buf, int len) __attribute__((weak));
spank_err_t spank_setenv(spank_t spank, const char* var, const char* val, int overwrite) __attribute__((weak));
// Only in sbatch/salloc/srun (allocator and local context); checked before each use.
spank_err_t spank_job_control_setenv(spank_t spank, const char* var, const char* val, int overwrite)
    __attribute__((weak));
}

namespace coloc::spank {

inline bool spank_api_available() {
    return spank_context && spank_remote && spank_option_register && spank_get_item && spank_getenv && spank_setenv;
}

}  // namespace coloc::spank
