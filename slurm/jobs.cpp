#include "slurm/jobs.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <stdexcept>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

#include "slurm/gres_detail.hpp"
#include "slurm/hostlist.hpp"
#include "slurm/session.hpp"

namespace coloc::slurm {

SlurmJobNode parse_gres_detail(const std::string& node, const std::string& detail) {
    SlurmJobNode out;
    out.node = node;
    try {
        const NodeGres gres = parse_node_gres(detail);
        out.gpus = gres.gpus;
        out.gpu_count = gres.gpu_count > 0 ? gres.gpu_count : gres.slot_count;
    } catch (const GresDetailError&) {
        // Reconciliation adopts what it can: a detail it cannot read says nothing about GPUs.
    }
    return out;
}

SlurmSnapshot load_slurm_jobs() { return *load_slurm_jobs_changed_since(0); }

std::optional<SlurmSnapshot> load_slurm_jobs_changed_since(std::int64_t updated_at) {
    init_libslurm();
    job_info_msg_t* msg = nullptr;
    if (slurm_load_jobs(static_cast<time_t>(updated_at), &msg, SHOW_ALL) != SLURM_SUCCESS) {
        // slurmctld compares whole seconds and answers "no change" only for a table older than
        // the second before `updated_at`, so a change in that same second is not missed.
        if (updated_at > 0 && errno == SLURM_NO_CHANGE_IN_DATA) return std::nullopt;
        throw std::runtime_error(std::string("slurm_load_jobs: ") + last_slurm_error());
    }
    SlurmSnapshot snap;
    snap.taken_at = static_cast<std::int64_t>(std::time(nullptr));
    snap.updated_at = static_cast<std::int64_t>(msg->last_update);
    for (std::uint32_t i = 0; i < msg->record_count; ++i) {
        const slurm_job_info_t& j = msg->job_array[i];
        SlurmJob job;
        job.job_id = j.job_id;
        job.uid = j.user_id;
        job.name = j.name ? j.name : "";
        job.partition = j.partition ? j.partition : "";
        const std::uint32_t base = j.job_state & JOB_STATE_BASE;
        job.running = base == JOB_RUNNING || base == JOB_SUSPENDED;
        job.start_time = base == JOB_PENDING ? 0 : static_cast<std::int64_t>(j.start_time);
        job.pending = base == JOB_PENDING;
        job.completing = (j.job_state & JOB_COMPLETING) != 0;
        if (j.time_limit != INFINITE && j.time_limit != NO_VAL && j.time_limit > 0)
            job.time_limit_s = static_cast<std::int64_t>(j.time_limit) * 60;
        job.priority = j.priority;
        job.submit_time = static_cast<std::int64_t>(j.submit_time);
        job.nodes_wanted = j.num_nodes > 0 && j.num_nodes != NO_VAL ? static_cast<int>(j.num_nodes) : 1;
        job.tres_per_node = j.tres_per_node ? j.tres_per_node : "";
        job.required_nodes = j.req_nodes ? j.req_nodes : "";
        job.admin_comment = j.admin_comment ? j.admin_comment : "";
        job.waits_for_begin = job.pending && j.state_reason == WAIT_TIME;
        if (!job.running && base != JOB_PENDING) {
            job.end_time = static_cast<std::int64_t>(j.end_time);
            if (WIFEXITED(j.exit_code))
                job.exit_status = WEXITSTATUS(j.exit_code);
            else if (WIFSIGNALED(j.exit_code))
                job.exit_status = 128 + WTERMSIG(j.exit_code);
        }
        if (j.nodes && *j.nodes) {
            auto names = expand_hostlist(j.nodes);
            if (names)
                for (std::size_t n = 0; n < names->size(); ++n) {
                    const char* detail = n < j.gres_detail_cnt && j.gres_detail_str ? j.gres_detail_str[n] : nullptr;
                    job.nodes.push_back(parse_gres_detail((*names)[n], detail ? detail : ""));
                }
        }
        snap.jobs.push_back(std::move(job));
    }
    slurm_free_job_info_msg(msg);
    return snap;
}

}  // namespace coloc::slurm
