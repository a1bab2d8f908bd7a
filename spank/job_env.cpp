#include "spank/job_env.hpp"

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "slurm/hostlist.hpp"
#include "spank/gpu_env.hpp"

namespace coloc::spank {

namespace {

// A variable of the step's environment. Some are only in slurmstepd's own environment at
// init_post_opt (SLURMD_NODENAME for a batch step), hence the getenv fallback.
std::string step_env(spank_t sp, const char* name) {
    std::vector<char> buf(4096);
    for (int attempt = 0; attempt < 2; ++attempt) {
        spank_err_t rc = spank_getenv(sp, name, buf.data(), static_cast<int>(buf.size()));
        if (rc == ESPANK_SUCCESS) return std::string(buf.data());
        if (rc != ESPANK_NOSPACE) break;
        buf.resize(1 << 20);  // a long SLURM_JOB_NODELIST
    }
    const char* v = std::getenv(name);
    return v ? v : "";
}

// SLURM_JOB_NODELIST expanded; empty when it is malformed. At most 4096 names, as many as a
// place request may carry.
std::vector<std::string> job_nodes(const std::string& ranged) {
    if (ranged.empty()) return {};
    std::vector<std::string> out = slurm::expand_hostlist(ranged).value_or(std::vector<std::string>{});
    if (out.size() > 4096) out.resize(4096);
    return out;
}

}  // namespace

JobFacts read_job_facts(spank_t sp, std::uint32_t& step_id) {
    JobFacts f;
    std::uint32_t job = 0;
    if (spank_get_item(sp, S_JOB_ID, &job) == ESPANK_SUCCESS) f.job_id = job;
    step_id = 0;
    spank_get_item(sp, S_JOB_STEPID, &step_id);
    uid_t uid = 0;
    if (spank_get_item(sp, S_JOB_UID, &uid) == ESPANK_SUCCESS) f.uid = uid;
    // slurmstepd's own environment, from its slurmd: the step's environment may carry the batch
    // script's SLURMD_NODENAME (srun forwards it), which names the first node of the job.
    const char* node = std::getenv("SLURMD_NODENAME");
    f.node = node && *node ? node : step_env(sp, "SLURMD_NODENAME");
    f.partition = step_env(sp, "SLURM_JOB_PARTITION");
    f.job_name = step_env(sp, "SLURM_JOB_NAME");
    f.job_nodes = job_nodes(step_env(sp, "SLURM_JOB_NODELIST"));
    const std::string visible = step_env(sp, "CUDA_VISIBLE_DEVICES");
    f.slurm_gpus = slurm_gpus_from(step_env(sp, "SLURM_STEP_GPUS"), step_env(sp, "SLURM_JOB_GPUS"), visible,
                                   step_env(sp, "COLOC_DECISION"));
    if (!f.slurm_gpus.empty()) f.cuda_visible = parse_index_list(visible);
    return f;
}

std::string apply_outcome(spank_t sp, const Outcome& outcome, const std::string& endpoint) {
    std::string errors;
    if (outcome.set_devices &&
        spank_setenv(sp, "CUDA_VISIBLE_DEVICES", outcome.visible_devices.c_str(), 1) != ESPANK_SUCCESS)
        errors += "cannot set CUDA_VISIBLE_DEVICES";
    if (!outcome.decision_label.empty() &&
        spank_setenv(sp, "COLOC_DECISION", outcome.decision_label.c_str(), 1) != ESPANK_SUCCESS)
        errors += std::string(errors.empty() ? "" : "; ") + "cannot set COLOC_DECISION";
    // The job's slot for its communication bursts (coloc_report_align keeps to it when asked).
    if (!outcome.decision_label.empty() && outcome.phase_offset_s && outcome.phase_period_s) {
        char offset[32], period[32];
        std::snprintf(offset, sizeof offset, "%.6f", *outcome.phase_offset_s);
        std::snprintf(period, sizeof period, "%.6f", *outcome.phase_period_s);
        if (spank_setenv(sp, "COLOC_PHASE_OFFSET_S", offset, 1) != ESPANK_SUCCESS ||
            spank_setenv(sp, "COLOC_PHASE_PERIOD_S", period, 1) != ESPANK_SUCCESS)
            errors += std::string(errors.empty() ? "" : "; ") + "cannot set COLOC_PHASE_OFFSET_S";
    }
    // Where the job's own reports (libcoloc_report, coloc_report.py) go.
    if (!outcome.decision_label.empty() && spank_setenv(sp, "COLOC_ENDPOINT", endpoint.c_str(), 1) != ESPANK_SUCCESS)
        errors += std::string(errors.empty() ? "" : "; ") + "cannot set COLOC_ENDPOINT";
    return errors;
}

std::string epilog_env(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

std::optional<int> epilog_exit_code() {
    std::string v = epilog_env("SLURM_JOB_EXIT_CODE");
    if (v.empty()) return std::nullopt;
    char* end = nullptr;
    long status = std::strtol(v.c_str(), &end, 10);
    if (!end || *end != '\0') return std::nullopt;
    return exit_code_from_wait_status(static_cast<int>(status));
}

}  // namespace coloc::spank
