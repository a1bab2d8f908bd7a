// colocctl profiles: the catalogued and learned profiles colocd knows, with where each solo
// figure came from.
#include <CLI/CLI.hpp>

#include "ctl/commands.hpp"
#include "ctl/output.hpp"

namespace coloc::ctl {

namespace {

const std::vector<Field> kProfileFields = {
    {"name", "NAME"},
    {"kind", "KIND"},
    {"iter_time_s", "ITER_TIME_S", true},
    {"iter_time_from", "ITER_TIME_FROM"},
    {"iter_time_runs", "ITER_RUNS", true},
    {"runtime_s", "RUNTIME_S", true},
    {"runtime_from", "RUNTIME_FROM"},
    {"runtime_runs", "RUNTIME_RUNS", true},
};
constexpr const char* kProfileDefault = "name,kind,iter_time_s,iter_time_from,runtime_s,runtime_from";

}  // namespace

void add_profiles_command(CLI::App& app, const CtlOptions& opts, int& exit_code) {
    auto* cmd =
        app.add_subcommand("profiles", "show catalogued and learned profiles and where their figures came from");
    static bool learned_only = false;
    cmd->add_flag("-l,--learned", learned_only, "only profiles with a figure learned from solo runs");
    cmd->callback([&opts, &exit_code] {
        json reply;
        if (!call_daemon(opts, "profiles", "profiles", op_request(proto::Op::Profiles), reply, exit_code)) return;
        json rows = json::array();
        for (const auto& r : reply["profiles"])
            if (!learned_only || r.value("kind", "") == "learned" || r.value("iter_time_runs", 0) > 0 ||
                r.value("runtime_runs", 0) > 0)
                rows.push_back(r);
        if (opts.json) return print_json("profiles", "profiles", rows, json::array());
        exit_code = print_records(opts, "profiles", rows, kProfileFields, kProfileDefault);
    });
}

}  // namespace coloc::ctl
