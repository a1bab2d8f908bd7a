// colocctl steering [on|off]: what node steering has told Slurm, and the admin switch.
#include <CLI/CLI.hpp>
#include <iostream>

#include "ctl/commands.hpp"
#include "ctl/output.hpp"

namespace coloc::ctl {

namespace {

const std::vector<Field> kSteeringFields = {
    {"node", "NODE"}, {"extra_weight", "EXTRA_WEIGHT", true}, {"features", "FEATURES"}};

}  // namespace

void add_steering_command(CLI::App& app, const CtlOptions& opts, int& exit_code) {
    auto* cmd = app.add_subcommand("steering",
                                   "show node steering (weights and features colocd set in Slurm); "
                                   "`on` or `off` switches it (admins only)");
    static std::string state;
    cmd->add_option("STATE", state, "on or off")->check(CLI::IsMember({"on", "off"}));
    cmd->callback([&opts, &exit_code] {
        json request = op_request(proto::Op::Steering);
        if (!state.empty()) request["enabled"] = state == "on";
        json reply;
        if (!call_daemon(opts, "steering", "steering", request, reply, exit_code)) return;
        const json& s = reply["steering"];
        if (opts.json) return print_json("steering", "steering", s, json::array());
        std::cout << "steering " << (s.value("enabled", false) ? "on" : "off") << ", every " << s.value("interval_s", 0)
                  << " s: " << s.value("rounds", 0) << " rounds, " << s.value("updates", 0) << " node updates";
        if (s.contains("slurm_updates_sent"))
            std::cout << " (" << s["slurm_updates_sent"] << " accepted by Slurm, " << s["slurm_updates_failed"]
                      << " failed)";
        std::cout << "\n";
        if (!s.value("last_error", std::string()).empty())
            std::cout << "last error: " << s["last_error"].get<std::string>() << "\n";
        if (s["nodes"].empty()) return;
        exit_code = print_records(opts, "steering", s["nodes"], kSteeringFields, "node,extra_weight,features");
    });
}

}  // namespace coloc::ctl
