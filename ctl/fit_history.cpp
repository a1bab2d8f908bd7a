// colocctl fit --history FILE: pair delays learned from ended jobs' elapsed times over the
// intervals they shared (model/interval_regression.hpp), with no report from the jobs. FILE is
// `colocctl history --export` (JSON lines of job records with their co-locations) or sacct -P
// output (jobs overlapping on a node share at --node-sharing's level: replay/trace_history.hpp).
// The model given by --profiles (and --params) learns through Learner::learn_elapsed, as
// colocd does online; --params-out gets what it learned, which colocd and colocctl predict load.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "base/files.hpp"
#include "ctl/fit_history.hpp"
#include "ctl/output.hpp"
#include "model/coloc_model.hpp"
#include "model/io/profiles_yaml.hpp"
#include "model/run_history.hpp"
#include "proto/jobs.hpp"
#include "replay/readers.hpp"
#include "replay/trace_history.hpp"

namespace coloc::ctl {

namespace {
// sacct -P: the trace reader's fields and line checks, then overlaps on nodes.
std::vector<model::JobHistory> read_sacct_history(std::istream& in, const std::string& path, model::Sharing same_node,
                                                  bool skip_bad) {
    replay::Trace trace;
    trace.source = path;
    replay::ReadOptions options;
    options.skip_bad = skip_bad;
    replay::read_sacct(in, trace, options);
    if (trace.bad > 0) {
        std::cerr << "fit: skipped " << trace.bad << " malformed lines of " << path;
        if (!trace.bad_lines.empty())
            std::cerr << ", the first at line " << trace.bad_lines.front().line << ": " << trace.bad_lines.front().why;
        std::cerr << "\n";
    }
    if (std::none_of(trace.jobs.begin(), trace.jobs.end(),
                     [](const replay::TraceJob& j) { return j.recorded_start >= 0; }))
        throw std::runtime_error(path + ": no job with a Start time (fit --history needs sacct's Start field)");
    return replay::history_from_trace(trace, same_node);
}

std::vector<model::JobHistory> read_history(const std::string& path, model::Sharing same_node, bool skip_bad) {
    std::ifstream in;
    if (auto why = base::open_for_reading(in, path); !why.empty()) throw std::runtime_error(path + ": " + why);
    while (in.peek() != EOF && std::isspace(in.peek())) in.get();
    if (in.peek() != '{') return read_sacct_history(in, path, same_node, skip_bad);
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
        h.gpus = model::gpus_held(r.placements);
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
            if (auto why = base::open_for_reading(in, a.params); !why.empty())
                throw std::runtime_error(a.params + ": " + why);
            m.load_params_json(json::parse(in));
        }
        const auto same_node = model::sharing_from_string(a.node_sharing);
        if (!same_node || *same_node == model::Sharing::Link)
            throw std::runtime_error("--node-sharing: unknown level '" + a.node_sharing +
                                     "' (gpu, island, switch or node)");
        std::vector<model::EndedRun> runs = model::runs_from_history(read_history(a.history, *same_node, a.skip_bad));
        for (model::EndedRun& r : runs)  // no solo run: the runtime its profile declares, if any
            if (const model::JobProfile* p = m.catalogue().find(r.job); !(r.solo_s > 0) && p && p->has("runtime_s"))
                r.solo_s = p->runtime_s;
        model::IntervalOptions options;
        options.min_elapsed_s = a.min_elapsed_s;
        const model::IntervalFit fit = m.learn_elapsed(runs, options, a.gpu_type);
        json rows = json::array();
        auto round = [](double v) { return std::round(v * 1e4) / 1e4; };
        for (const auto& [k, d] : fit.pairs)
            rows.push_back({{"job", k.job},
                            {"neighbour", k.neighbour},
                            {"where", model::to_string(k.where)},
                            {"speed", round(1 / (1 + d.delay))},
                            {"prior", round(1 / (1 + d.prior))},
                            {"evidence", round(d.evidence)}});
        const std::size_t settled = m.elapsed_pairs().all().size();
        if (!a.params_out.empty()) {
            std::ofstream p;
            if (auto why = base::open_for_writing(p, a.params_out); !why.empty())
                throw std::runtime_error(a.params_out + ": " + why);
            if (!(p << m.params_json().dump(2) << "\n" << std::flush))
                throw std::runtime_error(a.params_out + ": cannot write: " + base::os_reason());
        }
        const model::LeftOut& l = fit.left_out;
        std::cerr << "fit: " << fit.used << " ended jobs used; left out " << l.total() << " (" << l.failed
                  << " failed or cancelled, " << l.too_short << " too short, " << l.no_solo << " without solo work, "
                  << l.alone << " never shared, " << l.several_gpus << " on several GPUs beside several jobs); "
                  << settled << " same-GPU pairs settled"
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
