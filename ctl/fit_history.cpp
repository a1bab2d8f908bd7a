// colocctl fit --history FILE: pair delays learned from ended jobs' elapsed times over the
// intervals they shared (model/interval_regression.hpp), with no report from the jobs. FILE is
// `colocctl history --export` (JSON lines of job records with their co-locations). The model
// given by --profiles (and --params) is the prior; the same-GPU pairs the evidence settles
// are written as observed pairs into --params-out, which colocd and colocctl predict load.
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "ctl/fit_history.hpp"
#include "ctl/output.hpp"
#include "model/coloc_model.hpp"
#include "model/io/files.hpp"
#include "model/io/profiles_yaml.hpp"
#include "model/run_history.hpp"
#include "proto/jobs.hpp"

namespace coloc::ctl {

namespace {
std::vector<model::JobHistory> read_history(const std::string& path) {
    std::ifstream in;
    if (auto why = model::io::open_for_reading(in, path); !why.empty()) throw std::runtime_error(path + ": " + why);
    std::vector<model::JobHistory> jobs;
    std::string text;
    for (int line = 1; std::getline(in, text); ++line) {
        if (text.empty()) continue;
        const json j = json::parse(text, nullptr, false);
        if (j.is_discarded() || !j.is_object())
            throw std::runtime_error(path + ":" + std::to_string(line) + ": not a JSON object");
        if (j.contains("format")) continue;  // the header line
        const proto::JobRecord r = proto::JobRecord::from_json(j);
        model::JobHistory h;
        h.job_id = r.job_id;
        h.profile = r.profile;
        h.user = r.user;
        h.job_name = r.job_name;
        h.state = r.state;
        h.exit_status = r.exit_status;
        if (!r.start || !r.end) {
            h.state = "unfinished";
        } else {
            h.start = static_cast<double>(*r.start);
            h.end = static_cast<double>(*r.end);
        }
        for (const proto::ColocationRecord& c : r.colocations.value_or(std::vector<proto::ColocationRecord>{})) {
            const auto where = model::sharing_from_string(c.sharing);
            if (!where)
                throw std::runtime_error(path + ":" + std::to_string(line) + ": unknown sharing '" + c.sharing + "'");
            h.shared.push_back({c.other, *where, static_cast<double>(c.start),
                                static_cast<double>(c.end.value_or(r.end.value_or(c.start)))});
        }
        jobs.push_back(std::move(h));
    }
    return jobs;
}

const std::vector<Field>& kFields() {
    static const std::vector<Field> f = {
        {"job", "JOB"},           {"neighbour", "NEIGHBOUR"}, {"where", "WHERE"},
        {"speed", "SPEED", true}, {"prior", "PRIOR", true},   {"evidence", "EVIDENCE", true},
    };
    return f;
}
}  // namespace

int run_fit_history(const CtlOptions& opts, const FitHistoryArgs& a) {
    try {
        const model::ProfileCatalogue cat = model::io::load_profiles_yaml(a.profiles);
        model::ColocParams params;
        params.gpu_type = a.gpu_type;
        model::ColocModel m(cat, params);
        if (!a.params.empty()) {
            std::ifstream in;
            if (auto why = model::io::open_for_reading(in, a.params); !why.empty())
                throw std::runtime_error(a.params + ": " + why);
            m.load_params_json(json::parse(in));
        }
        const std::vector<model::EndedRun> runs = model::runs_from_history(read_history(a.history));
        auto prior = [&](const model::PairKey& k) {
            const model::Neighbour n{&m.catalogue().lookup(k.neighbour), k.where, std::nullopt};
            const model::Prediction p = m.predict(m.catalogue().lookup(k.job), std::span(&n, 1));
            return model::DelayPrior{1 / p.speed - 1, std::max(p.uncertainty, 0.01) / (p.speed * p.speed)};
        };
        const model::IntervalFit fit = model::fit_interval_delays(runs, prior);
        json rows = json::array(), observed = json::array();
        auto round = [](double v) { return std::round(v * 1e4) / 1e4; };
        for (const auto& [k, d] : fit.pairs) {
            const double before = 1 / (1 + prior(k).delay), speed = 1 / (1 + d.delay);
            rows.push_back({{"job", k.job},
                            {"neighbour", k.neighbour},
                            {"where", model::to_string(k.where)},
                            {"speed", round(speed)},
                            {"prior", round(before)},
                            {"evidence", round(d.evidence)}});
            if (k.where == model::Sharing::Gpu && d.evidence >= 1 && m.catalogue().find(k.job) &&
                m.catalogue().find(k.neighbour))
                observed.push_back(
                    {{"gpu_type", a.gpu_type}, {"job", k.job}, {"neighbour", k.neighbour}, {"speed", speed}, {"n", 1}});
        }
        if (!a.params_out.empty()) {
            m.load_params_json({{"observed_pairs", observed}});
            std::ofstream p;
            if (auto why = model::io::open_for_writing(p, a.params_out); !why.empty())
                throw std::runtime_error(a.params_out + ": " + why);
            if (!(p << m.params_json().dump(2) << "\n" << std::flush))
                throw std::runtime_error(a.params_out + ": cannot write: " + model::io::os_reason());
        }
        const model::LeftOut& l = fit.left_out;
        std::cerr << "fit: " << fit.used << " ended jobs used; left out " << l.total() << " (" << l.failed
                  << " failed or cancelled, " << l.too_short << " too short, " << l.no_solo << " without solo work, "
                  << l.alone << " never shared); " << observed.size() << " same-GPU pairs settled"
                  << (a.params_out.empty() ? "" : ", written to " + a.params_out) << "\n";
        CtlOptions o = opts;
        o.json = opts.json || a.json;
        return print_records(o, "pairs", rows, kFields(), "job,neighbour,where,speed,prior,evidence");
    } catch (const std::exception& e) {
        std::cerr << "colocctl: error: " << e.what() << "\n";
        return 1;
    }
}

}  // namespace coloc::ctl
