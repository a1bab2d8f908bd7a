// colocctl: inspect colocd, predict and fit the model, replay job logs.
#include <cstdlib>
#include <iostream>

#include "ctl/commands.hpp"

namespace {

using coloc::ctl::CommandAdder;

// Every subcommand, in the order `colocctl --help` lists them.
constexpr CommandAdder kCommandAdders[] = {
    coloc::ctl::add_status_command,  coloc::ctl::add_nodes_command,   coloc::ctl::add_jobs_command,
    coloc::ctl::add_history_command, coloc::ctl::add_explain_command, coloc::ctl::add_predict_command,
    coloc::ctl::add_fit_command,     coloc::ctl::add_metrics_command, coloc::ctl::add_steering_command,
    coloc::ctl::add_replay_command,
};

std::string env_or(const char* name, const std::string& fallback) {
    const char* v = std::getenv(name);
    return v && *v ? v : fallback;
}

}  // namespace

int main(int argc, char** argv) {
    coloc::ctl::CtlOptions opts;
    opts.endpoint = env_or("COLOC_ENDPOINT", "ipc:///run/coloc/colocd.sock");
    opts.munge_socket = env_or("COLOC_MUNGE_SOCKET", "");
    opts.format = env_or("COLOCCTL_FORMAT", "");
    int exit_code = 0;

    CLI::App app{"colocctl: inspect colocd, predict co-location slowdowns, replay job logs"};
    app.set_help_flag("--help", "print this help and exit");
    app.set_version_flag("-V,--version", "colocctl (coloc) 0.1");
    app.require_subcommand(1);
    app.fallthrough();
    app.add_option("--endpoint", opts.endpoint, "colocd's endpoint (env COLOC_ENDPOINT)");
    app.add_option("--timeout", opts.timeout_ms, "milliseconds to wait for colocd")->check(CLI::Range(1, 600000));
    app.add_flag("--json", opts.json, "JSON output: {\"meta\",\"errors\",<records>}");
    app.add_flag("-P,--parsable2", opts.parsable, "'|'-separated output without padding");
    app.add_flag("-h,--noheader", opts.noheader, "no header line");
    app.add_option("-o,--format", opts.format, "comma-separated fields to show (env COLOCCTL_FORMAT)");
    for (CommandAdder add : kCommandAdders) add(app, opts, exit_code);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int rc = app.exit(e);
        return rc == 0 ? 0 : 2;
    }
    return exit_code;
}
