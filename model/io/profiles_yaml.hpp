// The profile catalogue file (etc/profiles.yaml, man/coloc-profiles.5):
//   profiles:            list of {name, family, batch_size, iter_time_s, gpus, nodes, sm_util,
//                        mem_bw_util, gpu_mem_gb, host_pressure, comm_bytes, comm_fraction,
//                        comm_period_s, solo_throughput: {gpu_type: it/s}, description}
//   pairs:               {gpu_type: {job: {neighbour: speed relative to solo}}}  (optional)
// Unknown keys, wrong types and out-of-range values are errors naming file, line and key.
#pragma once

#include <iosfwd>
#include <stdexcept>
#include <string>

#include "model/catalogue.hpp"

namespace coloc::model::io {

struct ProfileError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

ProfileCatalogue load_profiles_yaml(const std::string& path);
ProfileCatalogue parse_profiles_yaml(const std::string& text, const std::string& source);
void write_profiles_yaml(std::ostream& out, const ProfileCatalogue& catalogue);

}  // namespace coloc::model::io
