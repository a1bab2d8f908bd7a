#include "slurm/pending_jobs.hpp"

#include <stdexcept>

extern "C" {
#include <slurm/slurm.h>
}

#include "slurm/session.hpp"

namespace coloc::slurm {

bool update_pending_job(std::int64_t job_id, std::int64_t begin, const std::optional<std::string>& nodes,
                        std::string& why) {
    try {
        init_libslurm();
    } catch (const std::exception& e) {
        why = e.what();
        return false;
    }
    job_desc_msg_t desc;
    slurm_init_job_desc_msg(&desc);
    // By its string: job_desc_msg_t has job_id_str on every release (25.11 dropped job_id).
    std::string id = std::to_string(job_id);
    desc.job_id_str = id.data();
    desc.begin_time = static_cast<time_t>(begin);
    std::string list = nodes.value_or("");
    if (nodes) desc.req_nodes = list.data();  // "" clears the list
    if (slurm_update_job(&desc) != SLURM_SUCCESS) {
        why = "cannot update pending job " + std::to_string(job_id) + ": " + last_slurm_error();
        return false;
    }
    return true;
}

}  // namespace coloc::slurm
