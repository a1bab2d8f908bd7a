// colocctl fit --measurements FILE --out PROFILES: fit the model to a table of solo and
// co-located measurements (format: coloc-profiles(5), MEASUREMENTS). Writes the profiles and
// their measured pairs as a catalogue, chooses the same-GPU kernel's scale by leave-one-job-
// type-out error, calibrates the node and link terms from node/link rows, and reports the
// cross-validated error. Needs no daemon.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/files.hpp"
#include "ctl/commands.hpp"
#include "ctl/fit.hpp"
#include "ctl/fit_history.hpp"
#include "ctl/output.hpp"
#include "model/coloc_model.hpp"
#include "model/io/measurements_csv.hpp"
#include "model/io/profiles_yaml.hpp"
#include "model/measurements.hpp"
#include "model/validation.hpp"

namespace coloc::ctl {

namespace {
struct FitArgs {
    std::string measurements, out, params_out, gpu_type;  // gpu_type "" = the data's
    std::string history, profiles, params;                // --history: from ended jobs
    std::string node_sharing = "node";                    // --history with sacct: same node means
    double min_elapsed_s = 300;
    bool skip_bad = false;
    bool json = false;
};

std::vector<std::string> gpu_types(const model::ProfileCatalogue& cat) {
    std::vector<std::string> g;
    for (const model::MeasuredPair& p : cat.pairs())
        if (std::find(g.begin(), g.end(), p.gpu_type) == g.end()) g.push_back(p.gpu_type);
    return g;
}

// Mean leave-one-type-out error over the GPU types with enough job types to hold one out.
double loto_error(const model::ProfileCatalogue& cat, const model::GpuShareParams& p) {
    double sum = 0;
    int n = 0;
    for (const std::string& g : gpu_types(cat)) {
        const model::GpuPairData d = model::gpu_pair_data(cat, g);
        if (d.types.size() < 3) continue;
        const double e = model::leave_one_type_out(d, p).coloc.value();
        if (std::isnan(e)) continue;
        sum += e;
        ++n;
    }
    return n ? sum / n : std::numeric_limits<double>::quiet_NaN();
}

// The GPU type the parameters are for: --gpu-type, which the data must have measured, or else the
// data's own. Data on several types leaves the choice to the user: a guess would mislabel them.
std::string fitted_gpu_type(const model::Measurements& m, const std::string& option) {
    std::vector<std::string> seen;
    auto note = [&](const std::string& g) {
        if (std::find(seen.begin(), seen.end(), g) == seen.end()) seen.push_back(g);
    };
    for (const model::SoloMeasurement& s : m.solo) note(s.gpu_type);
    for (const model::PairMeasurement& p : m.pairs) note(p.gpu_type);
    std::string names;
    for (const std::string& g : seen) names += (names.empty() ? "" : ", ") + g;
    if (!option.empty()) {
        if (std::find(seen.begin(), seen.end(), option) == seen.end())
            throw std::runtime_error("--gpu-type '" + option + "': " + m.source + " has no measurement on it (it has " +
                                     (names.empty() ? "none" : names) + ")");
        return option;
    }
    if (seen.empty()) throw std::runtime_error(m.source + ": no measurement");
    if (seen.size() > 1)
        throw std::runtime_error(m.source + " holds measurements on " + names +
                                 ": give --gpu-type, the GPU type of the nodes the parameters are for");
    return seen.front();
}

model::GpuShareParams choose_kernel(const model::ProfileCatalogue& cat) {
    const model::GpuShareParams base;
    model::GpuShareParams best = base;
    double best_err = loto_error(cat, base);
    if (std::isnan(best_err)) return base;
    for (double scale : {0.7, 1.0, 1.4})
        for (double penalty : {5.0, 10.0, 20.0}) {
            model::GpuShareParams p = base;
            for (double& b : p.bandwidth) b *= scale;
            p.family_penalty = penalty;
            const double e = loto_error(cat, p);
            if (e < best_err - 1e-9) {
                best_err = e;
                best = p;
            }
        }
    return best;
}

const std::vector<Field>& kFitFields() {
    static const std::vector<Field> f = {
        {"gpu_type", "GPU"},
        {"job_types", "TYPES", true},
        {"pairs", "PAIRS", true},
        {"lopo_mae", "LOPO_MAE", true},
        {"lopo_rowcol_mae", "ROWCOL_MAE", true},
        {"loto_mae", "LOTO_MAE", true},
        {"loto_family_mae", "FAMILY_MAE", true},
    };
    return f;
}

}  // namespace

int run_fit(const CtlOptions& opts, const FitFiles& a) {
    try {
        const model::Measurements m = model::io::read_measurements_csv(a.measurements);
        const model::ProfileCatalogue cat = model::catalogue_from(m);  // its messages name the file and line
        model::ColocParams params;
        params.gpu_type = fitted_gpu_type(m, a.gpu_type);
        params.gpu = choose_kernel(cat);
        model::ColocModel fitted(cat, params);

        // Node and link rows calibrate their terms through the same learner colocd uses.
        int calibrated = 0;
        for (const model::PairMeasurement& pm : m.pairs) {
            if (pm.where == model::Sharing::Gpu) continue;
            const model::JobProfile* job = fitted.catalogue().find(pm.job);
            const model::JobProfile* other = fitted.catalogue().find(pm.neighbour);
            const double speed = model::normalised_speed(m, pm);
            if (!job || !other || !(speed > 0)) continue;
            const model::Neighbour n{other, pm.where, std::nullopt};
            fitted.observe(*job, std::span(&n, 1), 1.0 / speed);
            ++calibrated;
        }

        std::ofstream out;
        if (auto why = base::open_for_writing(out, a.out); !why.empty()) throw std::runtime_error(a.out + ": " + why);
        out << "# coloc profile catalogue written by colocctl fit from " << a.measurements << "\n";
        model::io::write_profiles_yaml(out, cat);
        if (!out.flush()) throw std::runtime_error(a.out + ": cannot write: " + base::os_reason());
        if (!a.params_out.empty()) {
            std::ofstream p;
            if (auto why = base::open_for_writing(p, a.params_out); !why.empty())
                throw std::runtime_error(a.params_out + ": " + why);
            if (!(p << fitted.params_json().dump(2) << "\n" << std::flush))
                throw std::runtime_error(a.params_out + ": cannot write: " + base::os_reason());
        }

        json rows = json::array();
        for (const std::string& g : gpu_types(cat)) {
            const model::GpuPairData d = model::gpu_pair_data(cat, g);
            const model::CvScores lopo = model::leave_one_pair_out(d, params.gpu);
            json row = {{"gpu_type", g},
                        {"job_types", d.types.size()},
                        {"pairs", d.observations()},
                        {"lopo_mae", std::round(lopo.coloc.value() * 1e4) / 1e4},
                        {"lopo_rowcol_mae", std::round(lopo.baseline.value() * 1e4) / 1e4}};
            if (d.types.size() >= 3) {
                const model::CvScores loto = model::leave_one_type_out(d, params.gpu);
                row["loto_mae"] = std::round(loto.coloc.value() * 1e4) / 1e4;
                row["loto_family_mae"] = std::round(loto.baseline.value() * 1e4) / 1e4;
            }
            rows.push_back(row);
        }
        if (!(opts.json || a.json))
            std::cout << "fit: " << cat.size() - 1 << " profiles, " << cat.pairs().size() << " same-GPU pairs, "
                      << calibrated << " node/link rows calibrated; parameters for " << params.gpu_type << "; wrote "
                      << a.out << (a.params_out.empty() ? "" : " and " + a.params_out) << "\n";
        CtlOptions o = opts;
        o.json = opts.json || a.json;
        return print_records(o, "fit", rows, kFitFields(),
                             "gpu_type,job_types,pairs,lopo_mae,lopo_rowcol_mae,loto_mae,loto_family_mae");
    } catch (const std::exception& e) {
        std::cerr << "colocctl: error: " << e.what() << "\n";
        return 1;
    }
}

void add_fit_command(CLI::App& app, const CtlOptions& opts, int& exit_code) {
    auto* cmd = app.add_subcommand("fit", "fit the model to solo and co-located measurements (no daemon)");
    static FitArgs args;
    args = {};  // a fresh command line starts from the defaults
    cmd->add_option("--measurements", args.measurements, "measurement CSV (coloc-profiles(5), MEASUREMENTS)");
    cmd->add_option("--out", args.out, "profile catalogue to write (YAML)");
    cmd->add_option("--history", args.history,
                    "learn pair delays from ended jobs instead (colocctl history --export or sacct -P output)");
    cmd->add_option("--node-sharing", args.node_sharing,
                    "with --history FILE from sacct: what jobs overlapping on a node share (gpu, island, switch, "
                    "node; default node)");
    cmd->add_option("--min-elapsed", args.min_elapsed_s,
                    "with --history: runs shorter than this many seconds are left out (default 300)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_flag("--skip-bad", args.skip_bad, "with --history FILE from sacct: skip and count malformed lines");
    cmd->add_option("--profiles", args.profiles, "with --history: the profile catalogue (YAML)");
    cmd->add_option("--params", args.params, "with --history: learned parameters to start from (JSON)");
    cmd->add_option("--params-out", args.params_out, "also write the fitted model parameters (JSON)");
    cmd->add_option("--gpu-type", args.gpu_type,
                    "GPU type the parameters are for; default: the measurements' (required when they hold several)");
    cmd->add_flag("--json", args.json, "JSON output");
    cmd->callback([&opts, &exit_code] {
        if (!args.history.empty()) {
            if (args.profiles.empty()) throw CLI::ValidationError("--history needs --profiles");
            exit_code = run_fit_history(opts, {args.history, args.profiles, args.params, args.params_out,
                                               args.gpu_type.empty() ? "v100" : args.gpu_type, args.json,
                                               args.node_sharing, args.min_elapsed_s, args.skip_bad});
            return;
        }
        if (args.measurements.empty() || args.out.empty())
            throw CLI::ValidationError("fit needs --measurements and --out (or --history and --profiles)");
        exit_code = run_fit(opts, {args.measurements, args.out, args.params_out, args.gpu_type, args.json});
    });
}

}  // namespace coloc::ctl
