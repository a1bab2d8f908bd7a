#include "spank/task_fence.hpp"

#include <unistd.h>

#include "proto/messages.hpp"
#include "spank/device_fence.hpp"
#include "spank/device_rules.hpp"

namespace coloc::spank {

TaskFenceResult fence_task(const PluginConfig& config, const JobFacts& facts, std::uint32_t step,
                           const Outcome& outcome, pid_t pid, StepFence& fence) {
    TaskFenceResult r;
    const bool bind = outcome.set_devices && facts.slurm_gpus.empty();
    if (config.isolate == PluginConfig::Isolate::Off || !bind) return r;
    std::string why;
    if (config.gpus <= 0) {
        why = "the plugstack argument gpus= is needed to know the node's GPUs";
    } else {
        std::string missing;
        const auto node_gpus = gpu_device_numbers(config.gpu_devices, config.gpus, missing);
        FenceTarget t{pid, facts.node, ::getpid(), facts.job_id, step, denied_devices(node_gpus, outcome.gpus)};
        if (!missing.empty()) {
            why = missing;
        } else if (t.denied.empty()) {
            return r;  // every GPU of the node is the step's own
        } else {
            const FenceResult f = fence_process(config.device_cgroup, t);
            if (!f.dir.empty()) fence.dir = f.dir;
            why = f.error;
            if (why.empty()) {
                r.done = "GPUs " + proto::gpu_list(outcome.gpus) + " fenced in " + f.dir;
                return r;
            }
        }
    }
    r.refuse = config.isolate == PluginConfig::Isolate::Required;
    if (!fence.failure_logged) {
        fence.failure_logged = true;
        r.error = "job " + std::to_string(facts.job_id) + ": GPUs " + proto::gpu_list(outcome.gpus) +
                  " not fenced: " + why + (r.refuse ? "; launch refused (isolate=required)" : "; running unfenced");
    }
    return r;
}

}  // namespace coloc::spank
