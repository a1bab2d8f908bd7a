// The plugin's SPANK-free sources, compiled into the unit tests: the Makefile links spank/*.cpp
// only into build/spank_coloc.so. Each is included here once; the tests include the headers.
// (slot_lookup.cpp, job_env.cpp and spank_coloc.cpp need slurmctld or a SPANK host and are
// exercised on the local cluster instead.)
#include "spank/bounded_child.cpp"
#include "spank/exchange_util.cpp"
#include "spank/gpu_env.cpp"
#include "spank/gres_count.cpp"
#include "spank/local_state.cpp"
#include "spank/placement.cpp"
#include "spank/plugin_args.cpp"
#include "spank/reports.cpp"
#include "spank/user_options.cpp"
