#include "slurm/job_slots.hpp"

#include <algorithm>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

#include "slurm/gres_detail.hpp"
#include "slurm/hostlist.hpp"
#include "slurm/session.hpp"

namespace coloc::slurm {

namespace {

// The node's position in the job's node list: gres_detail_str is indexed by it.
int node_index(const char* nodes, const std::string& node) {
    if (!nodes || node.empty()) return -1;
    const auto names = expand_hostlist(nodes);
    if (!names) return -1;
    const auto it = std::find(names->begin(), names->end(), node);
    return it == names->end() ? -1 : static_cast<int>(it - names->begin());
}

}  // namespace

int job_gres_count(std::uint32_t job_id, const std::string& node, const std::string& gres, std::string& why) {
    job_info_msg_t* msg = nullptr;
    if (slurm_load_job(&msg, job_id, SHOW_DETAIL) != SLURM_SUCCESS || !msg) {
        why = std::string("slurm_load_job: ") + last_slurm_error();
        return -1;
    }
    int count = -1;
    std::string malformed;
    for (uint32_t i = 0; i < msg->record_count && count < 0; ++i) {
        const slurm_job_info_t& job = msg->job_array[i];
        if (job.job_id != job_id) continue;
        int idx = node_index(job.nodes, node);
        try {
            if (idx >= 0 && static_cast<uint32_t>(idx) < job.gres_detail_cnt && job.gres_detail_str &&
                job.gres_detail_str[idx])
                count = gres_count(job.gres_detail_str[idx], gres);
            else if (job.tres_per_node)
                count = tres_per_node_count(job.tres_per_node, gres);
            else
                count = 0;  // the job asked for no GRES at all
        } catch (const GresDetailError& e) {
            malformed = e.what();
        }
    }
    slurm_free_job_info_msg(msg);
    if (count < 0)
        why = "job " + std::to_string(job_id) + ": no readable " + gres + " count in Slurm's job record" +
              (malformed.empty() ? "" : " (" + malformed + ")");
    return count;
}

}  // namespace coloc::slurm
