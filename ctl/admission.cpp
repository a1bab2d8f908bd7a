// colocctl admission [on|off]: the pending bind jobs colocd holds or released (and to which
// node), with the sharing rule's reason, and the admin switch.
#include <CLI/CLI.hpp>
#include <iostream>

#include "ctl/commands.hpp"
#include "ctl/output.hpp"

namespace coloc::ctl {

namespace {

const std::vector<Field> kPendingFields = {
    {"job_id", "JOBID", true}, {"released", "RELEASED"}, {"node", "NODE"}, {"why", "WHY"}};

// The GPUs a job submitted now may take at once (colocd.yaml(5), admission: standing offers).
void print_offers(const json& o) {
    const std::string file = o.value("file", std::string());
    if (file.empty()) {
        std::cout << "standing offers: none (admission.offers_file is empty)\n";
        return;
    }
    std::cout << "standing offers in " << file << ": ";
    if (!o.value("error", std::string()).empty()) {
        std::cout << "not written: " << o["error"].get<std::string>() << "\n";
        return;
    }
    if (!o.value("written", false)) {
        std::cout << "none written yet\n";
        return;
    }
    if (o["nodes"].empty()) std::cout << "none (no idle GPU, or a job is held)";
    bool first = true;
    for (const json& n : o["nodes"]) {
        std::cout << (first ? "" : ", ") << n.value("node", std::string()) << " " << n.value("gpus", 0)
                  << (n.value("gpus", 0) == 1 ? " GPU" : " GPUs");
        first = false;
    }
    std::cout << "\n";
}

}  // namespace

void add_admission_command(CLI::App& app, const CtlOptions& opts, int& exit_code) {
    auto* cmd = app.add_subcommand("admission",
                                   "show admission (which pending bind jobs colocd holds, which it released to "
                                   "which node, and why); `on` or `off` switches it (admins only)");
    static std::string state;
    cmd->add_option("STATE", state, "on or off")->check(CLI::IsMember({"on", "off"}));
    cmd->callback([&opts, &exit_code] {
        json request = op_request(proto::Op::Admission);
        if (!state.empty()) request["enabled"] = state == "on";
        json reply;
        if (!call_daemon(opts, "admission", "admission", request, reply, exit_code)) return;
        const json& s = reply["admission"];
        if (opts.json) return print_json("admission", "admission", s, json::array());
        std::cout << "admission " << (s.value("enabled", false) ? "on" : "off")
                  << (s.value("enabled", false) && !s.value("active", false) ? " (idle: elastic slots are on)" : "")
                  << ", every " << s.value("interval_s", 0) << " s, lease " << s.value("lease_s", 0)
                  << " s: " << s.value("rounds", 0) << " rounds, " << s.value("released", 0) << " jobs released, "
                  << s.value("held", 0) << " held now";
        if (s.contains("slurm_updates_sent"))
            std::cout << " (" << s["slurm_updates_sent"] << " job updates accepted by Slurm, "
                      << s["slurm_updates_failed"] << " refused)";
        std::cout << "\n";
        if (s.contains("arrivals"))
            std::cout << "arrivals expected: " << s["arrivals"].value("jobs_per_hour", 0.0)
                      << " bind jobs/h, counted over the last " << s["arrivals"].value("counted_s", 0.0) / 3600
                      << " h (window " << s["arrivals"].value("window_s", 0) << " s)\n";
        if (s.contains("offers")) print_offers(s["offers"]);
        if (s.contains("exploration") && s["exploration"].value("share", 0.0) > 0)
            std::cout << "exploration: " << s["exploration"].value("explored", 0) << " of "
                      << s["exploration"].value("weighed", 0)
                      << " decisions weighed tried a pairing only the margin held (share "
                      << s["exploration"].value("share", 0.0) << ")\n";
        if (!s.value("last_error", std::string()).empty())
            std::cout << "last error: " << s["last_error"].get<std::string>() << "\n";
        if (!s["pending"].empty())
            exit_code = print_records(opts, "pending", s["pending"], kPendingFields, "job_id,released,node,why");
    });
}

}  // namespace coloc::ctl
