// colocctl probe: a site's own calibration. Runs each job alone and each pair of jobs on one GPU
// of a node, through sbatch, the plugin and colocd (ctl/probe_runs.hpp), takes the iteration times
// the jobs reported to colocd, and writes what `colocctl fit` reads; --fit runs that fit too.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "base/files.hpp"
#include "ctl/commands.hpp"
#include "ctl/fit.hpp"
#include "ctl/output.hpp"
#include "ctl/probe_plan.hpp"
#include "ctl/probe_runs.hpp"
#include "model/io/measurements_csv.hpp"
#include "model/io/profiles_yaml.hpp"

namespace coloc::ctl {

namespace {

struct ProbeArgs {
    std::vector<std::string> jobs;
    probe::Target target;
    std::string gpu_type, profiles;
    int max_pairs = -1;
    bool fit = false;
};

const std::vector<Field>& kProbeFields() {
    static const std::vector<Field> f = {
        {"job", "JOB"},           {"neighbour", "NEIGHBOUR"},   {"iter_time_s", "ITER_TIME_S", true},
        {"speed", "SPEED", true}, {"reports", "REPORTS", true}, {"copies", "COPIES", true},
    };
    return f;
}

void on_signal(int) { probe::g_interrupted = true; }

// SIGINT and SIGTERM stop the probe at the next poll (its jobs cancelled) rather than kill it.
struct SignalGuard {
    struct sigaction old_int {
    }, old_term{};
    SignalGuard() {
        probe::g_interrupted = false;
        struct sigaction sa {};
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
    }
    ~SignalGuard() {
        sigaction(SIGINT, &old_int, nullptr);
        sigaction(SIGTERM, &old_term, nullptr);
    }
};

double rounded(double v) { return std::round(v * 1e4) / 1e4; }

template <typename Write>
void write_file(const std::string& path, Write write) {
    std::ofstream out;
    if (auto why = base::open_for_writing(out, path); !why.empty()) throw std::runtime_error(path + ": " + why);
    write(out);
    if (!out.flush()) throw std::runtime_error(path + ": cannot write: " + base::os_reason());
}

// Each job's profile: the catalogue's (or a new one), with the solo time measured and, where
// nvidia-smi sampled the solo run, its SM and memory utilisation.
model::ProfileCatalogue probed_profiles(const std::vector<probe::Job>& jobs, const std::vector<probe::Mean>& solo,
                                        const std::vector<std::string>& nvml, const model::ProfileCatalogue* given,
                                        const std::string& node) {
    model::ProfileCatalogue out;
    for (std::size_t j = 0; j < jobs.size(); ++j) {
        if (solo[j].count == 0) continue;
        const model::JobProfile* known = given ? given->find(jobs[j].name) : nullptr;
        model::JobProfile p = known ? *known : model::JobProfile{};
        p.name = jobs[j].name;
        p.iter_time_s = solo[j].mean_s();
        p.known["iter_time_s"] = true;
        if (const auto u = probe::parse_nvidia_smi(nvml[j])) {
            p.sm_util = u->sm;
            p.mem_bw_util = u->mem;
            p.known["sm_util"] = p.known["mem_bw_util"] = true;
            std::cerr << "probe: " << p.name << " alone on " << node << ": SM " << rounded(u->sm) << ", memory "
                      << rounded(u->mem) << " (nvidia-smi, " << u->samples << " samples)\n";
        } else {
            // What the job's sampling said instead, e.g. that the node has no nvidia-smi.
            const std::string said = nvml[j].substr(0, nvml[j].find('\n'));
            std::cerr << "probe: " << p.name << ": no NVML utilisation on " << node << " ("
                      << (said.empty() ? "no sample" : said) << "): sm_util and mem_bw_util "
                      << (known ? "kept from the catalogue" : "left to the model's defaults") << "\n";
        }
        out.intern(std::move(p));
    }
    return out;
}

int run_probe(const CtlOptions& opts, ProbeArgs& a) {
    std::vector<probe::Job> jobs;
    std::optional<model::ProfileCatalogue> given;
    std::vector<probe::Run> runs;
    try {
        for (const std::string& arg : a.jobs) jobs.push_back(probe::parse_job(arg));
        probe::check_jobs(jobs);
        if (!a.profiles.empty()) given = model::io::load_profiles_yaml(a.profiles);
        runs = probe::plan_runs(jobs, a.max_pairs);
        std::filesystem::create_directories(a.target.out_dir + "/runs");
        a.target.out_dir = std::filesystem::absolute(a.target.out_dir).string();  // the nodes write there too
    } catch (const std::exception& e) {
        std::cerr << "colocctl: error: probe: " << e.what() << "\n";
        return 2;
    }

    try {
        probe::check_node(opts, a.target.node, runs.size() > jobs.size());
    } catch (const std::exception& e) {
        std::cerr << "colocctl: error: probe: " << e.what() << "\n";
        return 1;
    }

    SignalGuard signals;
    std::vector<probe::Mean> solo(jobs.size());
    std::vector<std::string> nvml(jobs.size());
    std::vector<probe::PairResult> pairs;
    json rows = json::array();
    int failed = 0;
    const int total = static_cast<int>(runs.size());
    for (int i = 0; i < total; ++i) {
        const probe::Run& run = runs[static_cast<std::size_t>(i)];
        const std::string head = "probe: " + std::to_string(i + 1) + "/" + std::to_string(total) + " " +
                                 run.label(jobs) + " on " + a.target.node;
        if (run.pair &&
            (solo[static_cast<std::size_t>(run.a)].count == 0 || solo[static_cast<std::size_t>(run.b)].count == 0)) {
            std::cerr << head << ": skipped (a solo run failed)\n";
            ++failed;
            continue;
        }
        std::cerr << head << " ...\n";
        const auto t0 = std::chrono::steady_clock::now();
        probe::RunResult r;
        try {
            r = probe::execute(opts, a.target, jobs, run, i + 1);
        } catch (const std::exception& e) {
            if (probe::g_interrupted) {
                std::cerr << head << ": interrupted; its jobs are cancelled\n";
                return 130;
            }
            r.error = e.what();
        }
        const long secs = std::lround(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        if (!r.error.empty()) {
            std::cerr << head << ": failed after " << secs << " s: " << r.error << "\n";
            ++failed;
            continue;
        }
        const std::string& na = jobs[static_cast<std::size_t>(run.a)].name;
        if (!run.pair) {
            solo[static_cast<std::size_t>(run.a)] = r.a;
            nvml[static_cast<std::size_t>(run.a)] = r.nvml;
            rows.push_back({{"job", na},
                            {"neighbour", ""},
                            {"iter_time_s", rounded(r.a.mean_s())},
                            {"speed", 1.0},
                            {"reports", r.a.count},
                            {"copies", r.copies}});
            std::cerr << head << ": " << rounded(r.a.mean_s()) << " s per iteration (" << r.a.count << " reports) in "
                      << secs << " s\n";
            continue;
        }
        const std::string& nb = jobs[static_cast<std::size_t>(run.b)].name;
        pairs.push_back({run.a, run.b, r.a, r.b});
        const double sa = probe::speed(solo[static_cast<std::size_t>(run.a)], r.a);
        const double sb = probe::speed(solo[static_cast<std::size_t>(run.b)], r.b);
        rows.push_back({{"job", na},
                        {"neighbour", nb},
                        {"iter_time_s", rounded(r.a.mean_s())},
                        {"speed", rounded(sa)},
                        {"reports", r.a.count},
                        {"copies", r.copies}});
        rows.push_back({{"job", nb},
                        {"neighbour", na},
                        {"iter_time_s", rounded(r.b.mean_s())},
                        {"speed", rounded(sb)},
                        {"reports", r.b.count},
                        {"copies", r.copies}});
        std::cerr << head << ": " << na << " at " << rounded(sa) << " beside " << nb << ", " << nb << " at "
                  << rounded(sb) << " (" << r.copies << " pairs, " << r.a.count + r.b.count << " reports) in " << secs
                  << " s\n";
    }

    const std::string csv = a.target.out_dir + "/measurements.csv";
    const std::string profiles = a.target.out_dir + "/profiles.yaml";
    try {
        const model::Measurements m = probe::measurements_from(jobs, solo, pairs, a.gpu_type);
        if (m.solo.empty()) throw std::runtime_error("no run measured anything: nothing written");
        write_file(csv, [&](std::ostream& out) { model::io::write_measurements_csv(out, m); });
        const model::ProfileCatalogue cat = probed_profiles(jobs, solo, nvml, given ? &*given : nullptr, a.target.node);
        write_file(profiles, [&](std::ostream& out) {
            out << "# coloc profiles measured by colocctl probe on " << a.target.node << " (" << a.gpu_type << ")\n";
            model::io::write_profiles_yaml(out, cat);
        });
        std::cerr << "probe: " << total - failed << " of " << total << " runs measured; wrote " << csv << " and "
                  << profiles << "\n";
    } catch (const std::exception& e) {
        std::cerr << "colocctl: error: probe: " << e.what() << "\n";
        return 1;
    }
    int code = print_records(opts, "probe", rows, kProbeFields(), "job,neighbour,iter_time_s,speed,reports,copies");
    if (a.fit) {
        if (pairs.empty()) {
            std::cerr << "colocctl: error: probe --fit: no pair was measured, nothing to fit\n";
            return 1;
        }
        if (!opts.json) std::cout << "\n";
        const int fit =
            run_fit(opts, {csv, a.target.out_dir + "/fit.yaml", a.target.out_dir + "/params.json", a.gpu_type, false});
        if (fit != 0) return fit;
    }
    return failed ? 1 : code;
}

}  // namespace

void add_probe_command(CLI::App& app, const CtlOptions& opts, int& exit_code) {
    auto* cmd = app.add_subcommand(
        "probe", "measure jobs alone and in pairs on one GPU of a node, through Slurm, and write the fit's CSV");
    static ProbeArgs args;
    args = {};  // a fresh command line starts from the defaults
    cmd->add_option("--job", args.jobs, "NAME=COMMAND, once per job type (the command reports with coloc_report)")
        ->required();
    cmd->add_option("--node", args.target.node, "the node to run on (it must be idle)")->required();
    cmd->add_option("--gpu-type", args.gpu_type, "the node's GPU type, as colocd.yaml's gpu_type names it")->required();
    cmd->add_option("--out", args.target.out_dir,
                    "directory for measurements.csv, profiles.yaml, runs/ (and fit.yaml, params.json); the node "
                    "writes job output there")
        ->required();
    cmd->add_option("--partition", args.target.partition, "the partition to submit to (default: Slurm's)");
    cmd->add_option("--gres", args.target.gres, "what each job asks for (default gpu:1)");
    cmd->add_option("--sbatch-arg", args.target.sbatch_args, "one more sbatch argument for every job (repeatable)");
    cmd->add_option("--max-pairs", args.max_pairs, "measure at most this many pairs (default all)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--seconds", args.target.seconds, "stop each run's commands after this many seconds (default 300)")
        ->check(CLI::Range(1, 86400));
    cmd->add_option("--warmup", args.target.warmup, "reports of each job left out at its start (default 5)")
        ->check(CLI::Range(0, 100000));
    cmd->add_option("--report-interval", args.target.report_interval_s,
                    "seconds between a job's reports (COLOC_REPORT_INTERVAL_S; default 0: every iteration)")
        ->check(CLI::Range(0.0, 3600.0));
    cmd->add_option("--profiles", args.profiles, "catalogue whose profiles of these names the output starts from");
    cmd->add_flag("--fit", args.fit, "also fit the model: fit.yaml and params.json (colocd.yaml's model_params:)");
    cmd->callback([&opts, &exit_code] { exit_code = run_probe(opts, args); });
}

}  // namespace coloc::ctl
