// colocctl's command line, apart from main() so that tests can run it.
#pragma once

// CLI11 stays out: the tests that run colocctl include this.
namespace CLI {
class App;
class ParseError;
}  // namespace CLI

namespace coloc::ctl {

// Parses the arguments and runs the subcommand; returns the exit status (2 for a usage error).
// Each call builds a fresh command line, with every option back at its default.
int colocctl_main(int argc, const char* const* argv);

// Reports a command-line error as "colocctl: error: ..." (help and version as CLI11 does);
// returns the exit status.
int report_parse_error(CLI::App& app, const CLI::ParseError& e);

}  // namespace coloc::ctl
