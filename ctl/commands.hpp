// colocctl subcommands: each file adds its own subcommand(s) to the CLI11 app.
// colocctl_main.cpp calls every adder in kCommandAdders; a new subcommand adds one line there.
#pragma once

#include "ctl/options.hpp"

// The app the adders extend: only the files that add a command include CLI11, which costs every
// file that includes it seconds of compile time.
namespace CLI {
class App;
}  // namespace CLI

namespace coloc::ctl {

// An adder registers a subcommand; its callback runs the command and sets `exit_code`.
using CommandAdder = void (*)(CLI::App& app, const CtlOptions& opts, int& exit_code);

void add_status_command(CLI::App& app, const CtlOptions& opts, int& exit_code);
void add_nodes_command(CLI::App& app, const CtlOptions& opts, int& exit_code);
void add_jobs_command(CLI::App& app, const CtlOptions& opts, int& exit_code);
void add_history_command(CLI::App& app, const CtlOptions& opts, int& exit_code);
void add_explain_command(CLI::App& app, const CtlOptions& opts, int& exit_code);
void add_metrics_command(CLI::App& app, const CtlOptions& opts, int& exit_code);
void add_observe_command(CLI::App& app, const CtlOptions& opts, int& exit_code);    // ctl/observe.cpp
void add_profiles_command(CLI::App& app, const CtlOptions& opts, int& exit_code);   // ctl/profiles.cpp
void add_steering_command(CLI::App& app, const CtlOptions& opts, int& exit_code);   // ctl_steering.cpp
void add_elastic_command(CLI::App& app, const CtlOptions& opts, int& exit_code);    // ctl/elastic.cpp
void add_admission_command(CLI::App& app, const CtlOptions& opts, int& exit_code);  // ctl/admission.cpp
// Model commands: work on files, without the daemon (ctl_predict.cpp, ctl_fit.cpp).
void add_predict_command(CLI::App& app, const CtlOptions& opts, int& exit_code);
void add_fit_command(CLI::App& app, const CtlOptions& opts, int& exit_code);
// A site's calibration through Slurm: solo and pair runs, the fit's CSV (ctl/probe.cpp).
void add_probe_command(CLI::App& app, const CtlOptions& opts, int& exit_code);
// Site check: Slurm's files against colocd.yaml, without the daemon (ctl/check.cpp).
void add_check_command(CLI::App& app, const CtlOptions& opts, int& exit_code);
// Offline replay of job logs, policy against policy: works on files, without the daemon (ctl_replay.cpp).
void add_replay_command(CLI::App& app, const CtlOptions& opts, int& exit_code);

}  // namespace coloc::ctl
