// colocctl check: the same comparison as `colocd --check`, from an admin's shell: slurm.conf,
// gres.conf, plugstack.conf and colocd.yaml, each disagreement named with file and line.
#include <CLI/CLI.hpp>
#include <cstdlib>

#include "config/site_check.hpp"
#include "config/slurm_layout.hpp"
#include "ctl/commands.hpp"

namespace coloc::ctl {

void add_check_command(CLI::App& app, const CtlOptions&, int& exit_code) {
    auto* cmd = app.add_subcommand("check", "check that slurm.conf, gres.conf, plugstack.conf and colocd.yaml agree");
    static std::string config = "/etc/coloc/colocd.yaml";
    static std::string slurm_conf;
    cmd->add_option("-c,--config", config, "colocd's configuration")->capture_default_str();
    cmd->add_option("--slurm-conf", slurm_conf, "slurm.conf (default: SLURM_CONF, else /etc/slurm/slurm.conf)");
    cmd->callback([&exit_code] {
        const std::string conf = slurm_conf.empty() ? daemon::slurm_conf_path() : slurm_conf;
        exit_code = daemon::print_check_report(daemon::check_site(config, conf), "colocctl check");
    });
}

}  // namespace coloc::ctl
