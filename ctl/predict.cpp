// colocctl predict --profiles FILE --pairs FILE: the model's predicted speeds for given pairs,
// so anyone can hold the model against their own measurements. Needs no daemon.
#include <CLI/CLI.hpp>
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "base/files.hpp"
#include "ctl/commands.hpp"
#include "ctl/output.hpp"
#include "model/coloc_model.hpp"
#include "model/factory.hpp"
#include "model/hardware.hpp"
#include "model/io/csv.hpp"
#include "model/io/profiles_yaml.hpp"

namespace coloc::ctl {

namespace {
struct PredictArgs {
    std::string profiles, pairs, gpu_type = "v100", model = "coloc", params;
    double gpu_memory_gb = model::GpuHardware{}.memory_gb;
    bool json = false;
};

struct PairLine {
    int line;
    std::string job, neighbour;
    model::Sharing where;
};

struct PredictError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Pairs file: `a,b,where` per line; '#' comments, blank lines and an `a,b,where` header skipped.
std::vector<PairLine> read_pairs(const std::string& path, const model::ProfileCatalogue& cat) {
    std::ifstream in;
    if (auto why = base::open_for_reading(in, path); !why.empty()) throw PredictError(path + ": " + why);
    std::vector<PairLine> out;
    std::string text;
    for (int line = 1; std::getline(in, text); ++line) {
        if (model::io::is_csv_comment(text)) continue;
        auto f = model::io::split_csv_line(text);
        auto fail = [&](const std::string& what) {
            throw PredictError(path + ":" + std::to_string(line) + ": " + what);
        };
        if (!f) fail("unterminated quote");
        if (f->size() != 3) fail("expected a,b,where (3 fields), got " + std::to_string(f->size()));
        if ((*f)[0] == "a" && (*f)[1] == "b" && (*f)[2] == "where") continue;
        auto where = model::sharing_from_string((*f)[2]);
        if (!where) fail("where: expected gpu, island, switch, node or link, got '" + (*f)[2] + "'");
        for (int i = 0; i < 2; ++i)
            if (!cat.find((*f)[static_cast<std::size_t>(i)]))
                fail("unknown profile '" + (*f)[static_cast<std::size_t>(i)] + "'");
        out.push_back(PairLine{line, (*f)[0], (*f)[1], *where});
    }
    return out;
}

const std::vector<Field> kPredictFields = {
    {"line", "LINE", true},
    {"job", "JOB"},
    {"neighbour", "NEIGHBOUR"},
    {"where", "WHERE"},
    {"job_speed", "JOB_SPEED", true},
    {"neighbour_speed", "NEIGHBOUR_SPEED", true},
    {"job_uncertainty", "JOB_SD", true},
    {"neighbour_uncertainty", "NEIGHBOUR_SD", true},
};

int run_predict(const CtlOptions& opts, const PredictArgs& a) {
    try {
        const model::ProfileCatalogue cat = model::io::load_profiles_yaml(a.profiles);
        const std::vector<PairLine> pairs = read_pairs(a.pairs, cat);
        std::unique_ptr<model::InterferenceModel> m;
        if (a.model == "coloc") {
            model::ColocParams params;
            params.gpu_type = a.gpu_type;
            auto coloc = std::make_unique<model::ColocModel>(cat, params);
            if (!a.params.empty()) {
                std::ifstream in;
                if (auto why = base::open_for_reading(in, a.params); !why.empty())
                    throw PredictError(a.params + ": " + why);
                coloc->load_params_json(json::parse(in));
            }
            // The GPUs asked for, whatever GPU type the parameters were fitted on.
            for (const std::string& n : model::configure_hardware(*coloc, {{a.gpu_type, a.gpu_memory_gb}}))
                std::cerr << "colocctl: warning: " << n << "\n";
            m = std::move(coloc);
        } else {
            m = model::make_model(a.model, cat);
        }
        json rows = json::array();
        for (const PairLine& p : pairs) {
            const model::JobProfile& x = *cat.find(p.job);
            const model::JobProfile& y = *cat.find(p.neighbour);
            const model::Neighbour nx{&y, p.where, std::nullopt}, ny{&x, p.where, std::nullopt};
            const model::Prediction px = m->predict(x, std::span(&nx, 1)), py = m->predict(y, std::span(&ny, 1));
            auto round = [](double v) { return std::round(v * 1e4) / 1e4; };
            rows.push_back({{"line", p.line},
                            {"job", p.job},
                            {"neighbour", p.neighbour},
                            {"where", model::to_string(p.where)},
                            {"job_speed", round(px.speed)},
                            {"neighbour_speed", round(py.speed)},
                            {"job_uncertainty", round(px.uncertainty)},
                            {"neighbour_uncertainty", round(py.uncertainty)}});
        }
        CtlOptions out = opts;
        out.json = opts.json || a.json;
        return print_records(
            out, "predictions", rows, kPredictFields,
            "line,job,neighbour,where,job_speed,neighbour_speed,job_uncertainty,neighbour_uncertainty");
    } catch (const std::exception& e) {
        std::cerr << "colocctl: error: " << e.what() << "\n";
        return 1;
    }
}
}  // namespace

void add_predict_command(CLI::App& app, const CtlOptions& opts, int& exit_code) {
    auto* cmd =
        app.add_subcommand("predict", "predict each job's speed relative to solo for pairs of profiles (no daemon)");
    static PredictArgs args;
    args = {};  // a fresh command line starts from the defaults
    cmd->add_option("--profiles", args.profiles, "profile catalogue (YAML, coloc-profiles(5))")->required();
    cmd->add_option("--pairs", args.pairs, "CSV lines a,b,where (where: gpu|island|switch|node|link)")->required();
    cmd->add_option("--gpu-type", args.gpu_type, "GPU type whose measured pairs to use")->capture_default_str();
    cmd->add_option("--gpu-memory-gb", args.gpu_memory_gb, "GPU memory: two footprints above it cannot share a GPU")
        ->check(CLI::Range(0.5, 65536.0))
        ->capture_default_str();
    cmd->add_option("--model", args.model, "model: coloc or baseline")
        ->check(CLI::IsMember({"coloc", "baseline"}))
        ->capture_default_str();
    cmd->add_option("--params", args.params, "learned parameters (JSON from colocctl fit --params-out or colocd)");
    cmd->add_flag("--json", args.json, "JSON output");
    cmd->callback([&opts, &exit_code] { exit_code = run_predict(opts, args); });
}

}  // namespace coloc::ctl
