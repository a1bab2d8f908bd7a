// colocctl elastic [on|off]: the gpuslot counts colocd set on bind nodes, the verdict on each
// pending job, and the admin switch.
#include <CLI/CLI.hpp>
#include <iostream>

#include "ctl/commands.hpp"
#include "ctl/output.hpp"

namespace coloc::ctl {

namespace {

const std::vector<Field> kNodeFields = {{"node", "NODE"}, {"slots", "SLOTS", true}, {"full", "FULL", true}};
const std::vector<Field> kPendingFields = {
    {"job_id", "JOBID", true}, {"opens", "OPENS"}, {"node", "NODE"}, {"why", "WHY"}};

}  // namespace

void add_elastic_command(CLI::App& app, const CtlOptions& opts, int& exit_code) {
    auto* cmd =
        app.add_subcommand("elastic",
                           "show elastic slots (the gpuslot counts colocd set on bind nodes, and why each "
                           "pending job has a shared slot or waits); `on` or `off` switches them (admins only)");
    static std::string state;
    cmd->add_option("STATE", state, "on or off")->check(CLI::IsMember({"on", "off"}));
    cmd->callback([&opts, &exit_code] {
        json request = op_request(proto::Op::Elastic);
        if (!state.empty()) request["enabled"] = state == "on";
        json reply;
        if (!call_daemon(opts, "elastic", "elastic_slots", request, reply, exit_code)) return;
        const json& s = reply["elastic_slots"];
        if (opts.json) return print_json("elastic", "elastic_slots", s, json::array());
        std::cout << "elastic slots " << (s.value("enabled", false) ? "on" : "off") << ", every "
                  << s.value("interval_s", 0) << " s: " << s.value("rounds", 0) << " rounds, " << s.value("updates", 0)
                  << " node updates";
        if (s.contains("slurm_updates_sent"))
            std::cout << " (" << s["slurm_updates_sent"] << " accepted by Slurm, " << s["slurm_updates_failed"]
                      << " failed)";
        std::cout << "\n";
        if (!s.value("last_error", std::string()).empty())
            std::cout << "last error: " << s["last_error"].get<std::string>() << "\n";
        if (!s["nodes"].empty()) exit_code = print_records(opts, "nodes", s["nodes"], kNodeFields, "node,slots,full");
        if (exit_code == 0 && !s["pending"].empty())
            exit_code = print_records(opts, "pending", s["pending"], kPendingFields, "job_id,opens,node,why");
    });
}

}  // namespace coloc::ctl
