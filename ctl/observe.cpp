// colocctl observe: reports a job's measured iteration time to colocd, as the job's own
// libcoloc_report does, for admins and scripts that measure it elsewhere.
#include <CLI/CLI.hpp>
#include <iostream>

#include "ctl/commands.hpp"
#include "ctl/output.hpp"

namespace coloc::ctl {

void add_observe_command(CLI::App& app, const CtlOptions& opts, int& exit_code) {
    auto* cmd = app.add_subcommand("observe", "report a running job's measured iteration time to colocd");
    static std::int64_t job_id = 0;
    static double iter_time_s = 0;
    static std::int64_t iterations = 0;
    cmd->add_option("JOBID", job_id, "the Slurm job id")->required()->check(CLI::Range(1LL, 0xFFFFFFFFLL));
    cmd->add_option("--iter-time", iter_time_s, "seconds one training iteration took (a mean)")
        ->required()
        ->check(CLI::Range(1e-6, 1e6));
    cmd->add_option("--iterations", iterations, "how many iterations the mean is over (sent along, informational)")
        ->check(CLI::Range(1LL, 1000000000000LL));
    cmd->callback([&opts, &exit_code] {
        json reply;
        json req = op_request(proto::Op::Observe);
        req["job_id"] = job_id;
        req["iter_time_s"] = iter_time_s;
        if (iterations > 0) req["iterations"] = iterations;
        if (!call_daemon(opts, "observe", "observation", req, reply, exit_code)) return;
        json seen = {{"job_id", job_id},
                     {"iter_time_s", iter_time_s},
                     {"measured_slowdown", reply.value("measured_slowdown", json())},
                     {"predicted_before", reply.value("predicted_before", json())},
                     {"predicted_now", reply.value("predicted_now", json())},
                     {"speed_uncertainty_now", reply.value("speed_uncertainty_now", json())}};
        if (opts.json) return print_json("observe", "observation", seen, json::array());
        std::cout << "job " << job_id << ": measured slowdown " << cell("x", seen["measured_slowdown"])
                  << ", predicted " << cell("x", seen["predicted_before"]) << " before, "
                  << cell("x", seen["predicted_now"]) << " now (speed +- " << cell("", seen["speed_uncertainty_now"])
                  << ")\n";
    });
}

}  // namespace coloc::ctl
