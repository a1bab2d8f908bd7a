// colocctl's command line: the common options, every subcommand, and how errors are reported.
#include "ctl/cli.hpp"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>

#include "ctl/commands.hpp"
#include "slurm/release.hpp"

namespace coloc::ctl {

namespace {

// Every subcommand, in the order `colocctl --help` lists them.
constexpr CommandAdder kCommandAdders[] = {
    add_status_command,  add_nodes_command,     add_jobs_command,     add_history_command,
    add_explain_command, add_observe_command,   add_profiles_command, add_predict_command,
    add_fit_command,     add_probe_command,     add_metrics_command,  add_steering_command,
    add_elastic_command, add_admission_command, add_replay_command,   add_check_command,
};

std::string env_or(const char* name, const std::string& fallback) {
    const char* v = std::getenv(name);
    return v && *v ? v : fallback;
}

}  // namespace

int report_parse_error(CLI::App& app, const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // As every other colocctl error, so that scripts and people find one prefix.
    std::cerr << "colocctl: error: " << e.what() << "\n"
              << "colocctl: run 'colocctl --help' or 'colocctl COMMAND --help' for the options\n";
    return 2;
}

int colocctl_main(int argc, const char* const* argv) {
    CtlOptions opts;
    opts.endpoint = env_or("COLOC_ENDPOINT", "ipc:///run/coloc/colocd.sock");
    opts.munge_socket = env_or("COLOC_MUNGE_SOCKET", "");
    opts.format = env_or("COLOCCTL_FORMAT", "");
    opts.cluster = env_or("COLOC_CLUSTER", "");
    opts.server_key_file = env_or("COLOC_SERVER_KEY", "");
    int exit_code = 0;

    CLI::App app{"colocctl: inspect colocd, predict co-location slowdowns, replay job logs"};
    app.set_help_flag("--help", "print this help and exit");
    const auto built = slurm::built_for();
    const auto running = slurm::running();
    app.set_version_flag("-V,--version", slurm::version_banner("colocctl", "0.1", built, running));
    if (const auto drift = slurm::drift_line(built, running); !drift.empty())
        std::cerr << "colocctl: warning: " << drift << "\n";
    app.require_subcommand(1);
    app.fallthrough();
    app.add_option("--endpoint", opts.endpoint, "colocd's endpoint (env COLOC_ENDPOINT)");
    app.add_option("-M,--cluster", opts.cluster,
                   "the cluster meant; colocd refuses when it serves another (env COLOC_CLUSTER)");
    app.add_option("--server-key", opts.server_key_file,
                   "colocd's public CURVE key file (env COLOC_SERVER_KEY, else /etc/coloc/colocd.pub when it exists)");
    app.add_option("--timeout", opts.timeout_ms, "milliseconds to wait for colocd")->check(CLI::Range(1, 600000));
    app.add_flag("--json", opts.json, "JSON output: {\"meta\",\"errors\",<records>}");
    app.add_flag("-P,--parsable2", opts.parsable, "'|'-separated output without padding");
    app.add_flag("-h,--noheader", opts.noheader, "no header line");
    app.add_option("-o,--format", opts.format, "comma-separated fields to show (env COLOCCTL_FORMAT)");
    for (CommandAdder add : kCommandAdders) add(app, opts, exit_code);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return report_parse_error(app, e);
    }
    return exit_code;
}

}  // namespace coloc::ctl
