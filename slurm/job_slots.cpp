#include "slurm/job_slots.hpp"

#include <algorithm>
#include <stdexcept>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

#include "slurm/gres_detail.hpp"
#include "slurm/hostlist.hpp"
#include "slurm/session.hpp"

namespace coloc::slurm {

JobGres load_job_gres(std::int64_t job_id) {
    job_info_msg_t* msg = nullptr;
    if (slurm_load_job(&msg, static_cast<std::uint32_t>(job_id), SHOW_DETAIL) != SLURM_SUCCESS || !msg)
        throw std::runtime_error("job " + std::to_string(job_id) + ": slurm_load_job: " + last_slurm_error());
    JobGres out;
    bool found = false;
    for (std::uint32_t i = 0; i < msg->record_count && !found; ++i) {
        const slurm_job_info_t& j = msg->job_array[i];
        if (j.job_id != static_cast<std::uint32_t>(job_id)) continue;
        found = true;
        out.job_id = job_id;
        out.nodes = j.nodes ? j.nodes : "";
        for (std::uint32_t n = 0; n < j.gres_detail_cnt && j.gres_detail_str; ++n)
            out.details.emplace_back(j.gres_detail_str[n] ? j.gres_detail_str[n] : "");
        out.tres_per_node = j.tres_per_node ? j.tres_per_node : "";
    }
    slurm_free_job_info_msg(msg);
    if (!found) throw std::runtime_error("job " + std::to_string(job_id) + ": slurmctld does not list it");
    return out;
}

int gres_count_on(const JobGres& job, const std::string& node, const std::string& gres) {
    const std::string who = "job " + std::to_string(job.job_id) + ": ";
    // gres_detail_str is indexed by the node's position in the job's node list.
    int idx = -1;
    if (const auto names = expand_hostlist(job.nodes)) {
        const auto it = std::find(names->begin(), names->end(), node);
        if (it != names->end()) idx = static_cast<int>(it - names->begin());
    }
    try {
        if (idx >= 0 && static_cast<std::size_t>(idx) < job.details.size() && !job.details[idx].empty())
            return gres_count(job.details[idx], gres);
        if (!job.tres_per_node.empty()) return tres_per_node_count(job.tres_per_node, gres);
    } catch (const GresDetailError& e) {
        throw std::runtime_error(who + "no readable " + gres + " count in Slurm's job record (" + e.what() + ")");
    }
    return 0;  // the job asked for no GRES at all
}

int job_gres_count(std::uint32_t job_id, const std::string& node, const std::string& gres, std::string& why) {
    try {
        return gres_count_on(load_job_gres(job_id), node, gres);
    } catch (const std::exception& e) {
        why = e.what();
        return -1;
    }
}

}  // namespace coloc::slurm
