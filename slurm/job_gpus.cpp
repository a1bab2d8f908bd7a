#include "slurm/job_gpus.hpp"

#include <stdexcept>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

#include "slurm/gres_detail.hpp"
#include "slurm/hostlist.hpp"
#include "slurm/session.hpp"

namespace coloc::slurm {

JobGpus job_gpus_from(std::int64_t job_id, const std::string& nodelist, const std::vector<std::string>& details) {
    const std::string job = "job " + std::to_string(job_id) + ": ";
    const auto names = expand_hostlist(nodelist);
    if (!names || names->empty()) throw std::runtime_error(job + "node list '" + nodelist + "' does not expand");
    if (details.size() != names->size())
        throw std::runtime_error(job + "slurmctld gave " + std::to_string(details.size()) + " gres details for " +
                                 std::to_string(names->size()) + " nodes (" + nodelist + ")");
    JobGpus out;
    out.job_id = job_id;
    for (std::size_t i = 0; i < names->size(); ++i) {
        NodeGres gres;
        try {
            gres = parse_node_gres(details[i]);
        } catch (const GresDetailError& e) {
            throw std::runtime_error(job + (*names)[i] + ": " + e.what());
        }
        if (gres.gpus.empty())
            throw std::runtime_error(job + (*names)[i] + ": Slurm gave no GPU there (gres detail '" + details[i] +
                                     "')");
        out.nodes.emplace_back((*names)[i], std::move(gres.gpus));
    }
    return out;
}

JobGpus load_job_gpus(std::int64_t job_id) {
    init_libslurm();
    job_info_msg_t* msg = nullptr;
    if (slurm_load_job(&msg, static_cast<std::uint32_t>(job_id), SHOW_DETAIL) != SLURM_SUCCESS)
        throw std::runtime_error("job " + std::to_string(job_id) + ": slurm_load_job: " + last_slurm_error());
    try {
        const slurm_job_info_t* j = nullptr;
        for (std::uint32_t i = 0; i < msg->record_count; ++i)
            if (msg->job_array[i].job_id == static_cast<std::uint32_t>(job_id)) j = &msg->job_array[i];
        if (!j) throw std::runtime_error("job " + std::to_string(job_id) + ": slurmctld does not list it");
        std::vector<std::string> details;
        for (std::uint32_t n = 0; n < j->gres_detail_cnt && j->gres_detail_str; ++n)
            details.emplace_back(j->gres_detail_str[n] ? j->gres_detail_str[n] : "");
        JobGpus out = job_gpus_from(job_id, j->nodes ? j->nodes : "", details);
        slurm_free_job_info_msg(msg);
        return out;
    } catch (...) {
        slurm_free_job_info_msg(msg);
        throw;
    }
}

}  // namespace coloc::slurm
