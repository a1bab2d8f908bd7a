#include "replay/report.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

namespace coloc::replay {

namespace {

std::string counts_line(const std::map<std::string, std::size_t>& counts) {
    std::string out;
    for (const auto& [why, n] : counts) out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + why;
    return out;
}

}  // namespace

std::string describe(const ReplayContext& c) {
    std::ostringstream out;
    const WorkloadReport& w = c.workload;
    out << "trace:    " << c.trace_source << " (" << c.trace_format << "), " << c.records << " records, " << w.jobs
        << " jobs replayed\n";
    if (!c.skipped.empty()) out << "skipped:  " << counts_line(c.skipped) << "\n";
    if (c.bad) {
        out << "bad:      " << c.bad << " malformed records skipped (--skip-bad)";
        for (std::size_t i = 0; i < c.bad_lines.size() && i < 3; ++i)
            out << (i ? "; " : ": ") << c.trace_source << ":" << c.bad_lines[i].line << ": " << c.bad_lines[i].why;
        out << "\n";
    }
    std::map<std::string, std::size_t> not_replayed;
    if (w.cpu_only) not_replayed["CPU-only (no GPU asked for)"] = w.cpu_only;
    if (w.too_large) not_replayed["larger than the cluster"] = w.too_large;
    if (!not_replayed.empty()) out << "not replayed: " << counts_line(not_replayed) << "\n";
    std::map<std::string, std::size_t> notes = c.notes;
    if (w.rounded_up) notes["GPUs rounded up to fill whole nodes' share"] = w.rounded_up;
    if (w.limit_from_run_time) notes["no time limit: the run time plans backfill"] = w.limit_from_run_time;
    if (w.limit_raised) notes["ran past its limit: the run time plans backfill"] = w.limit_raised;
    if (!notes.empty()) out << "notes:    " << counts_line(notes) << "\n";
    const ProfileCounts& p = w.profiles;
    out << "profiles: " << p.from_log << " from the log, ";
    if (p.by_family) out << p.by_family << " drawn within the model family the log names, ";
    out << p.by_rule << " by rules";
    for (std::size_t r = 0; r < p.per_rule.size(); ++r)
        if (p.per_rule[r])
            out << " (" << (r < c.rule_names.size() ? c.rule_names[r] : "rule " + std::to_string(r + 1)) << ": "
                << p.per_rule[r] << ")";
    out << ", " << p.by_otherwise << " by the rules' otherwise, " << p.drawn << " drawn from the catalogue (seed "
        << c.seed << ")\n";
    if (!p.unknown_in_log.empty()) {
        std::size_t n = 0;
        for (const auto& [name, k] : p.unknown_in_log) n += k;
        out << "          " << n << " jobs named a profile the catalogue lacks (";
        std::size_t shown = 0;
        for (const auto& [name, k] : p.unknown_in_log) {
            if (shown++ == 5) {
                out << ", ...";
                break;
            }
            out << (shown > 1 ? ", " : "") << name << " " << k;
        }
        out << ")\n";
    }
    out << "cluster:  " << c.cluster << "\n";
    out << "model:    " << c.model << " (what coloc places by)\n";
    out << "truth:    " << c.truth << " (how fast jobs really run); load " << c.load << "\n";
    if (!c.learning.empty()) out << "learning: " << c.learning << "\n";
    return out.str();
}

void write_jobs_csv(std::ostream& out, const Workload& workload, const ReplayResult& result) {
    out << "policy,job_id,profile,gpus,nodes,submit_s,start_s,end_s,wait_s,jct_s,solo_s,slowdown\n";
    char buf[256];
    for (const PolicyRun& run : result.runs)
        for (std::size_t i = 0; i < workload.jobs.size(); ++i) {
            const ReplayJob& j = workload.jobs[i];
            const JobOutcome& o = run.jobs[i];
            out << run.policy << "," << j.trace_id << "," << j.profile->name << "," << j.gpus() << "," << j.nodes
                << ",";
            if (o.end < 0) {
                std::snprintf(buf, sizeof buf, "%.3f,,,,,%.3f,\n", j.submit, j.work);
            } else {
                std::snprintf(buf, sizeof buf, "%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.6f\n", j.submit, o.start, o.end,
                              o.start - j.submit, o.end - j.submit, j.work, (o.end - o.start) / j.work);
            }
            out << buf;
        }
}

nlohmann::json summary_json(const ReplayContext& c, const ReplayResult& result) {
    using nlohmann::json;
    const WorkloadReport& w = c.workload;
    json profiles = {{"from_log", w.profiles.from_log},
                     {"by_family", w.profiles.by_family},
                     {"by_rule", w.profiles.by_rule},
                     {"per_rule", w.profiles.per_rule},
                     {"by_otherwise", w.profiles.by_otherwise},
                     {"drawn", w.profiles.drawn},
                     {"unknown_in_log", w.profiles.unknown_in_log},
                     {"per_profile", w.profiles.per_profile}};
    json bad_lines = json::array();
    for (const BadLine& b : c.bad_lines) bad_lines.push_back({{"line", b.line}, {"why", b.why}});
    json context = {{"trace",
                     {{"source", c.trace_source},
                      {"format", c.trace_format},
                      {"records", c.records},
                      {"bad", c.bad},
                      {"bad_lines", bad_lines},
                      {"skipped", c.skipped},
                      {"notes", c.notes}}},
                    {"workload",
                     {{"jobs", w.jobs},
                      {"cpu_only", w.cpu_only},
                      {"too_large", w.too_large},
                      {"rounded_up", w.rounded_up},
                      {"limit_from_run_time", w.limit_from_run_time},
                      {"limit_raised", w.limit_raised},
                      {"profiles", profiles}}},
                    {"cluster", c.cluster},
                    {"gpus", c.total_gpus},
                    {"model", c.model},
                    {"truth", c.truth},
                    {"learning", c.learning},
                    {"load", c.load},
                    {"seed", c.seed}};
    auto change = [&](const Summary& s, const char* against) -> json {
        for (const Summary& o : result.summaries)
            if (o.policy == against && o.mean_jct > 0 && o.policy != s.policy)
                return (s.mean_jct - o.mean_jct) / o.mean_jct;
        return nullptr;
    };
    json policies = json::array();
    for (const Summary& s : result.summaries) {
        json model_error = nullptr;
        if (s.judged)
            model_error = {{"pairs", s.pairs_formed},
                           {"first_tenth_pairs", s.model_error.first_pairs},
                           {"first_tenth_mae", s.model_error.first_mae},
                           {"last_tenth_pairs", s.model_error.last_pairs},
                           {"last_tenth_mae", s.model_error.last_mae},
                           {"learning", s.learned},
                           {"reports", s.reports},
                           {"elapsed_refits", s.refits}};
        policies.push_back({{"policy", s.policy},
                            {"jobs", s.jobs},
                            {"never_started", s.never_started},
                            {"mean_jct_s", s.mean_jct},
                            {"p50_jct_s", s.p50_jct},
                            {"p95_jct_s", s.p95_jct},
                            {"p99_jct_s", s.p99_jct},
                            {"mean_wait_s", s.mean_wait},
                            {"makespan_s", s.makespan},
                            {"gpu_utilisation", s.gpu_util},
                            {"mean_slowdown", s.mean_slowdown},
                            {"slowed_over_10pct", s.slowed_share},
                            {"mean_jct_change_vs_pack", change(s, "pack")},
                            {"mean_jct_change_vs_exclusive", change(s, "exclusive")},
                            {"events", s.events},
                            {"decisions", s.decisions},
                            {"backfilled", s.backfilled},
                            {"declined", s.declined},
                            {"replay_s", s.wall_s},
                            {"model_error", model_error}});
    }
    return {{"context", context}, {"policies", policies}};
}

}  // namespace coloc::replay
