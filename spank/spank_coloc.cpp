// spank_coloc.so: the SPANK callbacks and their dispatch by context. Slurm calls every callback
// in every context (sbatch, srun, slurmstepd, slurmd, prolog/epilog); each one does its work in
// one context only, catches everything, and returns 0: the plugin must never fail or stall a job.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <ctime>

extern "C" {
#include <slurm/slurm.h>
}

#include "proto/client.hpp"
#include "proto/errors.hpp"
#include "slurm/job_slots.hpp"
#include "slurm/release.hpp"
#include "spank/job_env.hpp"
#include "spank/net_call.hpp"
#include "spank/placement.hpp"
#include "spank/plugin_args.hpp"
#include "spank/spank_api.hpp"
#include "spank/stage_log.hpp"
#include "spank/task_fence.hpp"
#include "spank/user_notice.hpp"
#include "spank/user_options.hpp"

extern "C" {
// SPANK_PLUGIN(coloc, 1), spelled out: in C++ a namespace-scope const has internal linkage.
extern const char plugin_name[] = "coloc";
extern const char plugin_type[] = "spank";
extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
extern const unsigned int spank_plugin_version = 1;
}

namespace coloc::spank {
namespace {

// One step's view; slurmstepd runs one step per process, and task_init runs in a fork of it.
struct Plugin {
    PluginConfig config;
    std::vector<std::string> arg_errors;
    UserOptions options;
    JobFacts facts;
    Outcome outcome;
    bool started_reported = false;
    StepFence fence;
    std::uint32_t step = 0;
};

Plugin& plugin() {
    static Plugin p;
    return p;
}

void log_line(const std::string& line) { slurm_error("coloc: %s", line.c_str()); }

Services production_services() {
    Services s;
    s.lookup_slots = [](const JobFacts& f, const std::string& gres, std::string& why) {
        return slurm::job_gres_count(static_cast<std::uint32_t>(f.job_id), f.node, gres, why);
    };
    // In this process, without a fork, through spank_coloc_net.so (loaded only by a step that asks),
    // authenticated with colocd's key when there is one.
    s.call = [](const std::string& endpoint, const nlohmann::json& body, const proto::CallOptions& options) {
        const PluginConfig& c = plugin().config;
        if (!c.server_key_problem.empty()) throw proto::ProtoError(proto::code::kUnavailable, c.server_key_problem);
        proto::CallOptions keyed = options;
        keyed.server_key = c.server_key;
        return net_call(endpoint, body, keyed);
    };
    s.now = [] { return static_cast<std::int64_t>(std::time(nullptr)); };
    s.log = log_line;
    return s;
}

// A bad option value refuses the submission (sbatch/srun print the reason); in slurmstepd the
// job is already running, so the value is ignored instead.
int take_option(std::string (*set)(UserOptions&, const char*), const char* optarg, int remote) {
    try {
        std::string why = set(plugin().options, optarg);
        if (why.empty()) return 0;
        if (remote) {
            log_line("ignoring " + why);
            return 0;
        }
        slurm_error("coloc: %s", why.c_str());
        return -1;
    } catch (...) {
        return 0;
    }
}

int on_profile(int, const char* optarg, int remote) { return take_option(set_profile, optarg, remote); }
int on_switch(int, const char* optarg, int remote) { return take_option(set_switch, optarg, remote); }

struct spank_option options_table[] = {
    {const_cast<char*>("coloc-profile"), const_cast<char*>("NAME"),
     const_cast<char*>("coloc: what kind of training job this is (a profile name known to colocd)"), 1, 0, on_profile},
    {const_cast<char*>("coloc"), const_cast<char*>("on|off"),
     const_cast<char*>("coloc: interference-aware GPU placement for this job (default on)"), 1, 0, on_switch},
    SPANK_OPTIONS_TABLE_END,
};

// Once per slurmd start: which Slurm the plugin was built for, when the loaded libslurm is another.
void log_release_drift() {
    const auto drift = slurm::drift_line(slurm::built_for(), slurm::running());
    if (!drift.empty()) log_line(drift);
}

// Runs `fn` with everything caught: no exception may cross into Slurm.
template <class F>
int guarded(const char* callback, F&& fn) {
    try {
        if (!spank_api_available()) return 0;
        fn();
    } catch (const std::exception& e) {
        try {
            log_line(std::string(callback) + ": " + e.what());
        } catch (...) {}
    } catch (...) {
        try {
            log_line(std::string(callback) + ": unexpected failure");
        } catch (...) {}
    }
    return 0;
}

void init(spank_t sp, int ac, char** av) {
    Plugin& p = plugin();
    ParsedArgs parsed = parse_plugin_args(ac, av);
    p.config = parsed.config;
    p.arg_errors = parsed.errors;
    const spank_context_t ctx = spank_context();
    if (ctx == S_CTX_ALLOCATOR || ctx == S_CTX_LOCAL || ctx == S_CTX_REMOTE)
        for (spank_option* o = options_table; o->name; ++o) spank_option_register(sp, o);
    // The arguments matter in slurmd (logged once at its start) and slurmstepd (each step).
    if (!p.arg_errors.empty() && (ctx == S_CTX_SLURMD || ctx == S_CTX_REMOTE))
        log_line("ignoring plugstack arguments: " + join_errors(p.arg_errors));
    if (ctx == S_CTX_SLURMD) log_release_drift();
    if (ctx == S_CTX_SLURMD && !p.config.server_key_problem.empty()) log_line(p.config.server_key_problem);
    if (ctx == S_CTX_SLURMD && p.config.server_key_file.empty())
        log_line(std::string("no server_key and no ") + kDefaultServerKeyFile +
                 ": colocd's replies are not authenticated, and the plugin sends its munge credentials to "
                 "whatever answers on " +
                 p.config.endpoint + " (spank_coloc(8))");
}

// In sbatch, salloc and srun: tags the job with its profile for Slurm's prolog and epilog
// (SPANK_COLOC_PROFILE), so that where a job landed can be set against what colocd advised for
// its class, also by tools that know nothing of colocd.
void tag_job(spank_t sp) {
    const UserOptions& o = plugin().options;
    if (o.off || !spank_job_control_setenv) return;
    const std::string profile = o.profile.empty() ? "default" : o.profile;
    // Refused for an srun step inside an allocation (it makes no job): nothing to tag, no noise.
    spank_job_control_setenv(sp, "COLOC_PROFILE", profile.c_str(), 1);
}

void init_post_opt(spank_t sp) {
    const spank_context_t ctx = spank_context();
    if (ctx == S_CTX_ALLOCATOR || ctx == S_CTX_LOCAL) return tag_job(sp);
    if (ctx != S_CTX_REMOTE) return;
    Plugin& p = plugin();
    p.facts = read_job_facts(sp, p.step);
    if (p.step == SLURM_EXTERN_CONT) return;  // runs no task of the job
    if (p.facts.node.empty()) {
        log_line("job " + std::to_string(p.facts.job_id) + ": SLURMD_NODENAME is not set; not placing");
        return;
    }
    p.outcome = choose_step_gpus(p.config, p.options, p.facts, production_services());
}

void task_init(spank_t sp) {
    if (spank_context() != S_CTX_REMOTE) return;
    Plugin& p = plugin();
    const auto t0 = std::chrono::steady_clock::now();
    std::string err = apply_outcome(sp, p.outcome, p.config.job_endpoint());
    const double apply_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!err.empty()) log_line("job " + std::to_string(p.facts.job_id) + ": " + err);
    // This runs in the task's own process (forked from slurmstepd): its time has a line of its own.
    int task = -1;
    if (p.facts.job_id > 0 && spank_get_item(sp, S_TASK_ID, &task) == ESPANK_SUCCESS && task == 0) {
        const std::string line = apply_line(p.facts.job_id, p.step, p.facts.node, apply_ms);
        slurm_debug("coloc: %s", line.c_str());
        if (!p.config.timings_file.empty()) append_stage_line(p.config.timings_file, line);
    }
    // Once per step, by its first task: the user learns of a mistyped profile where they look.
    std::uint32_t global_task = 1;
    if (p.outcome.profile_unknown && spank_get_item(sp, S_TASK_GLOBAL_ID, &global_task) == ESPANK_SUCCESS &&
        global_task == 0)
        tell_user(unknown_profile_line(p.options.profile));
}

// Every task, in slurmstepd as root, before the task may exec: fenced to the step's GPUs.
// Returns false only when isolate=required and the task could not be fenced.
bool fence(spank_t sp) {
    if (spank_context() != S_CTX_REMOTE) return true;
    Plugin& p = plugin();
    pid_t pid = 0;
    if (spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS || pid <= 0) return true;
    const auto t0 = std::chrono::steady_clock::now();
    const TaskFenceResult r = fence_task(p.config, p.facts, p.step, p.outcome, pid, p.fence);
    if (!r.done.empty() && p.outcome.times.fence_ms < 0)  // the first task's, in the step's timing line
        p.outcome.times.fence_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!r.error.empty()) log_line(r.error);
    if (!r.done.empty()) slurm_debug("coloc: job %lld: %s", static_cast<long long>(p.facts.job_id), r.done.c_str());
    return !r.refuse;
}

void task_post_fork(spank_t sp) {
    if (spank_context() != S_CTX_REMOTE) return;
    Plugin& p = plugin();
    int task = -1;
    if (p.started_reported || spank_get_item(sp, S_TASK_ID, &task) != ESPANK_SUCCESS || task != 0) return;
    p.started_reported = true;
    const auto t0 = std::chrono::steady_clock::now();
    report_started(p.config, p.facts, p.outcome, production_services());
    const double report_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (p.facts.job_id <= 0) return;
    // The step's one timing line: debug level in slurmd's log, and the timings= file if named.
    const std::string line =
        stage_line(p.facts.job_id, p.step, p.facts.node, p.outcome.times, p.outcome.report_started ? report_ms : -1);
    slurm_debug("coloc: %s", line.c_str());
    if (!p.config.timings_file.empty()) append_stage_line(p.config.timings_file, line);
}

void job_epilog(spank_t sp, int ac, char** av) {
    if (spank_context() != S_CTX_JOB_SCRIPT) return;
    // slurm_spank_init is not called in the job script context: read the arguments here, into
    // the plugin's own config, which the calls to colocd read (its server key among them).
    plugin().config = parse_plugin_args(ac, av).config;
    const PluginConfig& config = plugin().config;
    std::uint32_t job = 0;
    if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS || job == 0)
        job = static_cast<std::uint32_t>(std::strtoul(epilog_env("SLURM_JOB_ID").c_str(), nullptr, 10));
    const std::string node = epilog_env("SLURMD_NODENAME");
    if (job == 0 || node.empty()) return;
    report_ended(config, job, node, epilog_exit_code(), production_services());
}

}  // namespace
}  // namespace coloc::spank

using namespace coloc::spank;

extern "C" {

int slurm_spank_init(spank_t sp, int ac, char** av) {
    return guarded("init", [&] { init(sp, ac, av); });
}

int slurm_spank_init_post_opt(spank_t sp, int, char**) {
    return guarded("init_post_opt", [&] { init_post_opt(sp); });
}

int slurm_spank_task_init(spank_t sp, int, char**) {
    return guarded("task_init", [&] { task_init(sp); });
}

int slurm_spank_task_post_fork(spank_t sp, int, char**) {
    bool launch = true;
    guarded("task_post_fork", [&] { launch = fence(sp); });
    guarded("task_post_fork", [&] { task_post_fork(sp); });
    return launch ? 0 : -1;  // -1 only with isolate=required: the admin chose a refused launch
}

// The fence cgroup goes once the step's processes have left it: tried as each task exits (the
// last one empties it) and again as the step ends.
int slurm_spank_task_exit(spank_t, int, char**) {
    return guarded("task_exit", [&] { remove_fence(plugin().fence.dir); });
}

int slurm_spank_exit(spank_t, int, char**) {
    return guarded("exit", [&] { remove_fence(plugin().fence.dir); });
}

// One `ended` per job per node: the epilog runs once on every node of the job when it ends,
// after all its steps, and also clears the job's holding from the node-local state.
int slurm_spank_job_epilog(spank_t sp, int ac, char** av) {
    return guarded("job_epilog", [&] { job_epilog(sp, ac, av); });
}

}  // extern "C"
