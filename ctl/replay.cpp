// colocctl replay [TRACE]: replay a job log offline through the placement engine and model that
// colocd uses, policy against policy, and print the table (and, with --out, CSV, JSON, plots).
// Needs no daemon. Without a trace it replays the built-in demo trace on the default cluster.
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/files.hpp"
#include "config/config.hpp"
#include "ctl/commands.hpp"
#include "model/baseline.hpp"
#include "model/coloc_model.hpp"
#include "model/io/gavel_json.hpp"
#include "model/io/measurements_csv.hpp"
#include "model/io/profiles_yaml.hpp"
#include "place/policy_factory.hpp"
#include "replay/demo.hpp"
#include "replay/gavel_throughputs.hpp"
#include "replay/measured_truth.hpp"
#include "replay/plots.hpp"
#include "replay/readers.hpp"
#include "replay/report.hpp"
#include "replay/synthetic.hpp"

namespace coloc::ctl {

namespace {

struct ReplayArgs {
    std::string trace, format, policies = "exclusive,slurm,pack,spread,coloc";
    std::string sharing = "rule";
    std::string learning = "on";
    double report_interval = replay::SimLearning{}.report_interval_s;
    double explore = 0;
    bool skip_bad = false;
    std::string config;
    int nodes = replay::DefaultCluster::nodes, gpus_per_node = replay::DefaultCluster::gpus_per_node;
    int slots_per_gpu = replay::DefaultCluster::slots_per_gpu, island_size = replay::DefaultCluster::island_size;
    int nodes_per_link = replay::DefaultCluster::nodes_per_link;
    std::string model = "coloc", profiles, measurements, exclude_pairs, gpu_type = "v100", rules;
    std::string truth = "model";
    double cannot_corun = 5.0;
    double load = 1.0;
    std::uint64_t seed = 1;
    int backfill_depth = 500;
    double pass_interval = 0;
    int coloc_max_nodes = place::ColocOptions{}.max_nodes_scored;
    double coloc_max_loss = 0;  // 0 = none
    std::string out;
    bool json = false, no_progress = false, no_plots = false;
    std::size_t synthetic = 0;
    double synthetic_load = 0.7;
};

struct ReplayError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::string read_file(const std::string& path) {
    std::ifstream in;
    if (auto why = base::open_for_reading(in, path); !why.empty()) throw ReplayError(path + ": " + why);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// A catalogue without the measured pairs of one GPU type (to judge the model on pairs it never saw).
model::ProfileCatalogue without_pairs(const model::ProfileCatalogue& in, const std::string& gpu_type) {
    model::ProfileCatalogue out;
    for (const auto& p : in.profiles())
        if (p.name != model::ProfileCatalogue::kDefaultName) out.intern(p);
    for (const auto& pair : in.pairs())
        if (pair.gpu_type != gpu_type) out.add_pair(pair);
    return out;
}

model::ProfileCatalogue load_catalogue(const ReplayArgs& a, const std::string& config_profiles) {
    if (!a.measurements.empty()) {
        std::string text = read_file(a.measurements);
        auto first = text.find_first_not_of(" \t\r\n");
        model::Measurements m;
        if (first != std::string::npos && text[first] == '{') {
            m = model::io::measurements_from_gavel_json(text, a.measurements);
        } else {
            std::istringstream in(text);
            m = model::io::parse_measurements_csv(in, a.measurements);
        }
        std::erase_if(m.pairs, [&](const model::PairMeasurement& p) { return p.gpu_type == a.exclude_pairs; });
        return model::catalogue_from(m);
    }
    std::string path = !a.profiles.empty() ? a.profiles : config_profiles;
    model::ProfileCatalogue c;
    if (path.empty()) {
        c = model::catalogue_from(replay::gavel_measurements());
    } else if (path == a.profiles) {
        c = model::io::load_profiles_yaml(path);
    } else {
        try {
            c = model::io::load_profiles_yaml(path);
        } catch (const std::exception& e) {
            // The path came from colocd.yaml: say so, or the user hunts for a file they never named.
            throw ReplayError(a.config + ": key 'profiles' (or give --profiles): " + e.what());
        }
    }
    return a.exclude_pairs.empty() ? c : without_pairs(c, a.exclude_pairs);
}

// "\rreplaying coloc  45% (450000 of 1000000 jobs done)" on a terminal, for replays that take
// longer than half a second, at most five times a second; erased when the policy is done.
struct Progress {
    using Clock = std::chrono::steady_clock;
    bool on = false;
    std::string policy;
    Clock::time_point started = Clock::now(), shown;
    bool showing = false;
    void start(const std::string& name) {
        policy = name;
        started = Clock::now();
    }
    void operator()(std::size_t done, std::size_t total) {
        if (!on || total == 0) return;
        const auto now = Clock::now();
        if (done == total) {
            if (showing) std::fprintf(stderr, "\r%*s\r", 72, "");
            showing = false;
        } else if (now - started > std::chrono::milliseconds(500) && now - shown > std::chrono::milliseconds(200)) {
            std::fprintf(stderr, "\rreplaying %-9s %3d%% (%zu of %zu jobs done)", policy.c_str(),
                         static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total)), done, total);
            shown = now;
            showing = true;
        }
        std::fflush(stderr);
    }
};

// The cluster replayed on: colocd.yaml's (--config), or the uniform one the options describe.
struct ReplayCluster {
    place::Topology topology;
    std::string description;      // for the report
    std::string config_profiles;  // the catalogue colocd.yaml names
    // The GPUs of each node type, and the parameters learned per GPU type: colocd.yaml's, or
    // --gpu-type's for a uniform cluster.
    std::vector<model::GpuHardware> hardware;
    model::LearnedGpuParams learned;
    std::vector<std::string> notes;     // what colocd.yaml leaves to a default
    daemon::AdmissionConfig admission;  // colocd.yaml's, else colocd's defaults
};

ReplayCluster cluster_from(const ReplayArgs& a) {
    ReplayCluster c;
    if (!a.config.empty()) {
        daemon::Config cfg = daemon::load_config(a.config);
        c.topology = std::move(cfg.topology);
        c.config_profiles = cfg.profiles;
        c.hardware = place::gpu_hardware(c.topology);
        c.learned = model::learned_gpu_params(cfg.model_params);
        c.notes = cfg.notes;
        c.admission = cfg.admission;
        c.description = std::to_string(c.topology.nodes().size()) + " nodes, " +
                        std::to_string(c.topology.total_gpus()) + " GPUs (" + a.config + ")";
    } else {
        c.topology =
            place::uniform_topology(a.nodes, a.gpus_per_node, a.slots_per_gpu, a.island_size, a.nodes_per_link);
        c.hardware.assign(c.topology.types().size(), model::GpuHardware{a.gpu_type, model::GpuHardware{}.memory_gb});
        c.description = std::to_string(a.nodes) + " nodes x " + std::to_string(a.gpus_per_node) + " GPUs, " +
                        std::to_string(a.slots_per_gpu) + " slot(s) per GPU";
    }
    return c;
}

// The trace: --synthetic's, the file's, or the built-in demo; Gavel's run times resolved.
replay::Trace load_trace(const ReplayArgs& a, const place::Topology& topology) {
    std::optional<replay::TraceFormat> format;
    if (!a.format.empty()) {
        format = replay::format_from_string(a.format);
        if (!format) throw ReplayError("--format '" + a.format + "' is not one of " + replay::format_names());
    }
    replay::ReadOptions read_options;
    read_options.skip_bad = a.skip_bad;
    replay::Trace trace;
    if (a.synthetic > 0) {
        if (!a.trace.empty()) throw ReplayError("give a trace or --synthetic, not both");
        replay::SyntheticOptions so;
        so.jobs = a.synthetic;
        so.seed = a.seed;
        so.cluster_gpus = topology.total_gpus();
        so.offered_load = a.synthetic_load;
        trace = replay::synthetic_trace(so);
    } else if (a.trace.empty()) {
        std::istringstream demo(replay::demo_trace_text());
        trace = replay::read_trace(demo, replay::TraceFormat::ColocHistory, "<built-in demo trace>", read_options);
    } else {
        trace = replay::read_trace_file(a.trace, format, read_options);
    }
    try {
        replay::resolve_gavel_run_times(trace, a.gpu_type);
    } catch (const replay::GpuTypeError& e) {
        throw ReplayError("--gpu-type '" + a.gpu_type + "': " + e.what());
    }
    return trace;
}

// The model coloc places by, its catalogue, and the truth the replay measures jobs by.
struct ReplayModels {
    std::unique_ptr<model::InterferenceModel> placement;
    std::unique_ptr<model::ProfileCatalogue> plain;  // the catalogue, when the placement model keeps none
    const model::ProfileCatalogue* catalogue = nullptr;
    std::unique_ptr<model::InterferenceModel> measured;
    const model::InterferenceModel* truth = nullptr;
    std::string truth_name = "the same model";
    std::vector<std::string> notes;  // what the model falls back to for the cluster's hardware
};

void choose_placement_model(const ReplayArgs& a, const ReplayCluster& cluster, ReplayModels& m) {
    model::ColocParams params;
    params.gpu_type = a.gpu_type;
    if (a.model == "coloc") {
        auto cm = std::make_unique<model::ColocModel>(load_catalogue(a, cluster.config_profiles), params);
        m.catalogue = &cm->catalogue();
        m.placement = std::move(cm);
    } else {
        m.plain = std::make_unique<model::ProfileCatalogue>(load_catalogue(a, cluster.config_profiles));
        m.catalogue = m.plain.get();
        m.placement = std::make_unique<model::BaselineModel>();
    }
    m.notes = model::configure_hardware(*m.placement, cluster.hardware, cluster.learned);
}

// --truth: the placement model itself, or measured pairs.
void choose_truth(const ReplayArgs& a, ReplayModels& m) {
    m.truth = m.placement.get();
    if (a.truth.rfind("measured:", 0) == 0) {
        replay::TruthOptions to;
        to.cannot_corun_slowdown = a.cannot_corun;
        const std::string file = a.truth.substr(9);
        replay::PairTable table;
        try {
            table = replay::load_pair_table(file, a.gpu_type);
        } catch (const replay::GpuTypeError& e) {
            throw ReplayError("--gpu-type '" + a.gpu_type + "': " + e.what() + " (--truth " + a.truth + ")");
        }
        m.truth_name = "measured same-GPU pairs on " + a.gpu_type + " from " +
                       (file == "gavel" ? std::string("Gavel (built in)") : file) + " (" +
                       std::to_string(table.measured()) + " pairs)";
        m.measured = std::make_unique<replay::MeasuredTruth>(std::move(table), to);
        m.truth = m.measured.get();
    } else if (a.truth != "model") {
        throw ReplayError("--truth '" + a.truth + "' is not 'model' or 'measured:FILE'");
    }
}

ReplayModels load_models(const ReplayArgs& a, const ReplayCluster& cluster) {
    ReplayModels m;
    choose_placement_model(a, cluster, m);
    choose_truth(a, m);
    return m;
}

// Warns of what the model falls back to, once the replay is sure to run.
void warn_of_defaults(const ReplayCluster& cluster, const ReplayModels& models) {
    for (const auto* notes : {&cluster.notes, &models.notes})
        for (const std::string& n : *notes) std::cerr << "colocctl: warning: " << n << "\n";
}

std::optional<replay::ProfileRules> load_rules(const ReplayArgs& a, const model::ProfileCatalogue& catalogue) {
    if (a.rules.empty()) return std::nullopt;
    return replay::load_profile_rules(a.rules, catalogue);
}

// Profiles for the trace's jobs, then the jobs the cluster can run.
replay::Workload make_workload(const ReplayArgs& a, const replay::Trace& trace, const ReplayModels& models,
                               const std::optional<replay::ProfileRules>& rules, const place::Topology& topology) {
    replay::ProfileCounts counts;
    auto profiles = replay::assign_profiles(trace, *models.catalogue, rules ? &*rules : nullptr, a.seed, counts);
    replay::Workload workload = replay::build_workload(trace, profiles, counts, topology, {a.load});
    if (workload.jobs.empty()) throw ReplayError("no job of the trace can be replayed on this cluster");
    return workload;
}

replay::ReplaySetup replay_setup(const ReplayArgs& a, const ReplayCluster& cluster, const ReplayModels& models) {
    replay::ReplaySetup setup;
    setup.topology = &cluster.topology;
    // A gated job waits for colocd to see it: its next watch of Slurm's queue (watch_ms), else
    // its next read (interval_s); half of that on average.
    if (cluster.admission.enabled) {
        const double watch_s = cluster.admission.watch_ms / 1000.0, interval_s = cluster.admission.interval_s;
        setup.admission_delay_s = (watch_s > 0 ? std::min(watch_s, interval_s) : interval_s) / 2;
    }
    setup.sim.arrival_window_s = cluster.admission.arrival_window_s;
    setup.sim.standing_offers = !cluster.admission.offers_file.empty();
    setup.policies = place::parse_policy_list(a.policies, replay::replay_policy_names());
    setup.model = models.placement.get();
    setup.truth = models.truth;
    setup.coloc.max_nodes_scored = a.coloc_max_nodes;
    if (a.coloc_max_loss > 0) setup.coloc.max_loss_per_gpu = a.coloc_max_loss;
    setup.coloc.sharing_rule = a.sharing == "rule";
    setup.learning = a.learning == "on";
    setup.sim.learning.report_interval_s = a.report_interval;
    setup.explore_share = a.explore;
    setup.sim.backfill_depth = a.backfill_depth;
    setup.sim.pass_interval_s = a.pass_interval;
    auto progress = std::make_shared<Progress>();
    progress->on = !a.no_progress && isatty(STDERR_FILENO);
    setup.sim.progress = [progress](std::size_t done, std::size_t total) { (*progress)(done, total); };
    setup.on_policy = [progress](const std::string& name) { progress->start(name); };
    return setup;
}

// Whether coloc's model learns in the replay, for the report.
std::string learning_line(const ReplayArgs& a, const ReplayModels& models) {
    if (a.learning != "on") return "off (--learning off): coloc places by its model as it is";
    if (!models.placement->learner()) return "on, but the " + models.placement->name() + " model does not learn";
    replay::SimLearning l;
    l.report_interval_s = a.report_interval;
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "on: coloc's model learns as colocd's does, from its jobs' iteration reports (every %g s, noise sd "
                  "%g) and ended jobs' elapsed times (the latest %zu per GPU type, refitted every %d); "
                  "coloc-nolearn and oracle do not",
                  l.report_interval_s, l.noise_sd, l.elapsed.capacity, l.elapsed.refit_every);
    return buf;
}

// What the report says the replay was: trace, workload, cluster, model and truth.
replay::ReplayContext describe_replay(const ReplayArgs& a, const replay::Trace& trace, const replay::Workload& workload,
                                      const std::optional<replay::ProfileRules>& rules, const ReplayCluster& cluster,
                                      const ReplayModels& models) {
    replay::ReplayContext context;
    context.trace_source = trace.source;
    context.trace_format = a.synthetic > 0 ? "synthetic" : replay::to_string(trace.format);
    context.records = trace.records;
    context.bad = trace.bad;
    context.bad_lines = trace.bad_lines;
    context.skipped = trace.skipped;
    context.notes = trace.notes;
    context.workload = workload.report;
    if (rules)
        for (const auto& r : rules->rules)
            context.rule_names.push_back("rule at " + a.rules + ":" + std::to_string(r.line));
    const place::Topology& topology = cluster.topology;
    context.cluster = cluster.description;
    context.total_gpus = topology.total_gpus();
    for (std::size_t n = 0; n < topology.nodes().size(); ++n) {
        const auto& type = topology.type_of(static_cast<int>(n));
        context.total_slots += type.gpus * type.slots_per_gpu;
    }
    const model::ProfileCatalogue& catalogue = *models.catalogue;
    context.model = models.placement->name() + " model on " + a.gpu_type + ", " + std::to_string(catalogue.size()) +
                    " profiles, " + std::to_string(catalogue.pairs().size()) + " measured pairs" +
                    (a.exclude_pairs.empty() ? "" : " (none on " + a.exclude_pairs + ")");
    context.truth = models.truth_name;
    context.learning = learning_line(a, models);
    context.load = a.load;
    context.seed = a.seed;
    return context;
}

// --out: jobs.csv and summary.json.
void write_results(const ReplayArgs& a, const replay::Workload& workload, const replay::ReplayResult& result,
                   const replay::ReplayContext& context) {
    std::error_code ec;
    std::filesystem::create_directories(a.out, ec);
    if (ec) throw ReplayError(a.out + ": cannot create the directory: " + ec.message());
    std::ofstream csv, summary;
    for (auto [file, name] : {std::pair{&csv, "/jobs.csv"}, std::pair{&summary, "/summary.json"}})
        if (auto why = base::open_for_writing(*file, a.out + name); !why.empty())
            throw ReplayError(a.out + name + ": " + why);
    replay::write_jobs_csv(csv, workload, result);
    summary << replay::summary_json(context, result).dump(2) << "\n";
    if (!csv.flush() || !summary.flush()) throw ReplayError(a.out + ": cannot write the results: " + base::os_reason());
}

void print_summary(bool json, const replay::ReplayResult& result, const replay::ReplayContext& context) {
    if (json) {
        std::cout << replay::summary_json(context, result).dump(2) << "\n";
    } else {
        std::cout << replay::describe(context) << "\n" << replay::format_table(result.summaries);
    }
}

// --out: the plots, and a line naming what was written (on stderr when stdout carries JSON).
void write_plot_files(const ReplayArgs& a, bool json, const replay::Workload& workload,
                      const replay::ReplayResult& result, const replay::ReplayContext& context) {
    replay::PlotFiles plots = replay::write_plots(a.out, workload, result, context, !a.no_plots);
    std::ostream& note = json ? std::cerr : std::cout;
    note << "\nwrote " << a.out << "/jobs.csv, " << a.out << "/summary.json and " << plots.written.size()
         << " plot files in " << a.out << "\n";
    if (!plots.problem.empty()) std::cerr << "colocctl: warning: plots not rendered: " << plots.problem << "\n";
}

int run(const CtlOptions& opts, const ReplayArgs& a) {
    const ReplayCluster cluster = cluster_from(a);
    const replay::Trace trace = load_trace(a, cluster.topology);
    const ReplayModels models = load_models(a, cluster);
    warn_of_defaults(cluster, models);
    const std::optional<replay::ProfileRules> rules = load_rules(a, *models.catalogue);
    const replay::Workload workload = make_workload(a, trace, models, rules, cluster.topology);
    const replay::ReplayResult result = replay::run_replay(workload, replay_setup(a, cluster, models));
    const replay::ReplayContext context = describe_replay(a, trace, workload, rules, cluster, models);
    const bool json = opts.json || a.json;
    if (!a.out.empty()) write_results(a, workload, result, context);
    print_summary(json, result, context);
    if (!a.out.empty()) write_plot_files(a, json, workload, result, context);
    return 0;
}

// CLI::PositiveNumber says "Value 0 not in range 0.000000 to 1.797...e308": say it plainly.
const CLI::Validator kAboveZero(
    [](std::string& text) {
        double v = 0;
        std::size_t used = 0;
        try {
            v = std::stod(text, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        return used == text.size() && v > 0 ? std::string() : "expected a number above 0, got '" + text + "'";
    },
    "NUMBER > 0");

}  // namespace

void add_replay_command(CLI::App& app, const CtlOptions& opts, int& exit_code) {
    static ReplayArgs a;
    a = {};  // a fresh command line starts from the defaults
    auto* cmd = app.add_subcommand("replay", "replay a job log offline, policy against policy (no daemon)");
    cmd->add_option("trace", a.trace, "the job log; none = the built-in demo trace");
    cmd->add_option("--synthetic", a.synthetic,
                    "replay N synthetic jobs instead (sizes 1-64 GPUs, log-normal run times, seeded by --seed)");
    cmd->add_option("--synthetic-load", a.synthetic_load, "GPU time the synthetic jobs ask for, per GPU of the cluster")
        ->check(kAboveZero)
        ->capture_default_str();
    cmd->add_option("--format", a.format,
                    "sacct|jobcomp|coloc-history|swf|helios|gavel|tiresias; detected from the content when left out");
    cmd->add_flag("--skip-bad", a.skip_bad, "skip and count malformed lines instead of stopping at the first");
    cmd->add_option("--policy", a.policies,
                    "policies to compare, comma-separated (also: coloc-nolearn, oracle, slurm-coloc)")
        ->capture_default_str();
    cmd->add_option("--config", a.config,
                    "take the cluster (node types, nodes, links) and admission settings from this colocd.yaml");
    cmd->add_option("--nodes", a.nodes, "nodes of the default cluster")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
    cmd->add_option("--gpus-per-node", a.gpus_per_node, "GPUs per node")
        ->check(CLI::Range(1, 64))
        ->capture_default_str();
    cmd->add_option("--slots-per-gpu", a.slots_per_gpu, "jobs a GPU may hold at once (1 = never shared)")
        ->check(CLI::Range(1, 16))
        ->capture_default_str();
    cmd->add_option("--island-size", a.island_size, "GPUs per NVLink island / PCIe switch")->capture_default_str();
    cmd->add_option("--nodes-per-link", a.nodes_per_link, "nodes per leaf switch")->capture_default_str();
    cmd->add_option("--model", a.model, "the model coloc places by")
        ->check(CLI::IsMember({"coloc", "baseline"}))
        ->capture_default_str();
    cmd->add_option("--profiles", a.profiles,
                    "profile catalogue (coloc-profiles(5)); default: Gavel's job types and measured pairs, built in");
    cmd->add_option("--measurements", a.measurements,
                    "make the catalogue from measurements instead (Gavel's throughput JSON or the fit CSV)");
    cmd->add_option("--exclude-pairs", a.exclude_pairs,
                    "leave out the model's measured pairs on this GPU type (judge it on pairs it never saw)");
    cmd->add_option("--gpu-type", a.gpu_type, "the nodes' GPU type (model reference, Gavel run times, measured truth)")
        ->capture_default_str();
    cmd->add_option("--rules", a.rules, "YAML rules giving jobs without a profile one by name, user or partition");
    cmd->add_option("--truth", a.truth,
                    "how fast co-located jobs really run: model, or measured:FILE (Gavel's JSON, the fit CSV, or "
                    "'gavel' for Gavel's pairs built in)")
        ->capture_default_str();
    cmd->add_option("--cannot-corun-slowdown", a.cannot_corun,
                    "measured truth: slowdown of a pair measured as unable to co-run")
        ->capture_default_str();
    cmd->add_option("--load", a.load, "arrival rate factor (2 = the same jobs arrive twice as fast)")
        ->check(kAboveZero)
        ->capture_default_str();
    cmd->add_option("--seed", a.seed, "seed for every random choice (profile draws)")->capture_default_str();
    cmd->add_option("--backfill-depth", a.backfill_depth, "queued jobs each backfill pass considers")
        ->check(CLI::Range(0, 1000000))
        ->capture_default_str();
    cmd->add_option("--pass-interval", a.pass_interval,
                    "queued jobs start at scheduling passes this many seconds apart (Slurm's bf_interval where its "
                    "backfill starts them); 0: the moment they can")
        ->check(CLI::Range(0.0, 86400.0))
        ->capture_default_str();
    cmd->add_option("--coloc-max-nodes", a.coloc_max_nodes, "occupied nodes coloc scores per decision (0 = all)")
        ->check(CLI::Range(0, 1000000))
        ->capture_default_str();
    cmd->add_option("--coloc-max-loss", a.coloc_max_loss,
                    "coloc declines a placement losing more than this per GPU (the job waits); 0 = never")
        ->check(CLI::Range(0.0, 1e9));
    cmd->add_option("--sharing", a.sharing,
                    "rule: coloc shares a GPU only when that is expected to finish sooner than waiting for GPUs "
                    "of its own; always: whenever a slot is free")
        ->check(CLI::IsMember({"rule", "always"}))
        ->capture_default_str();
    cmd->add_option("--learning", a.learning,
                    "on: coloc's model learns from the jobs it places (iteration reports, elapsed times), as "
                    "colocd's does; off: it places by the model as it is (as --policy coloc-nolearn)")
        ->check(CLI::IsMember({"on", "off"}))
        ->capture_default_str();
    cmd->add_option("--report-interval", a.report_interval,
                    "seconds between a learning coloc's jobs' iteration reports, as their COLOC_REPORT_INTERVAL_S "
                    "(0: one per iteration, replayed as a few per stretch of unchanged neighbours)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    cmd->add_option("--explore", a.explore,
                    "share (0 to 1) of the learning coloc's sharing decisions that may try a pairing the "
                    "sharing rule's margin holds back (0: none)")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
    cmd->add_option("--out", a.out, "also write jobs.csv, summary.json and plots (SVG, PNG) into this directory");
    cmd->add_flag("--no-plots", a.no_plots, "with --out: write the plot data and script, do not run gnuplot");
    cmd->add_flag("--json", a.json, "print the JSON summary instead of the table");
    cmd->add_flag("--no-progress", a.no_progress, "no progress line (it shows only on a terminal anyway)");
    cmd->callback([cmd, &opts, &exit_code] {
        try {
            // The demo (no trace, no model or truth chosen) is judged as bench/replay-quality is:
            // by Gavel's measured pairs on the GPU type, with a model that never saw those pairs.
            if (a.trace.empty() && a.synthetic == 0 && !cmd->count("--truth") && !cmd->count("--exclude-pairs") &&
                !cmd->count("--profiles") && !cmd->count("--measurements") && a.config.empty()) {
                a.truth = "measured:gavel";
                a.exclude_pairs = a.gpu_type;
            }
            exit_code = run(opts, a);
        } catch (const std::exception& e) {
            std::cerr << "colocctl: error: " << e.what() << "\n";
            exit_code = 1;
        }
    });
}

}  // namespace coloc::ctl
