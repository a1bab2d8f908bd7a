#include "replay/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace coloc::replay {

double percentile(std::vector<double>& values, double p) {
    if (values.empty()) return 0;
    std::size_t rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
    rank = std::clamp<std::size_t>(rank, 1, values.size());
    std::nth_element(values.begin(), values.begin() + static_cast<long>(rank - 1), values.end());
    return values[rank - 1];
}

ModelErrorTenths model_error_tenths(const PolicyRun& run) {
    ModelErrorTenths t;
    std::size_t started = 0;
    for (const JobOutcome& o : run.jobs) started += o.start >= 0;
    const std::size_t tenth = (started + 9) / 10;
    double first = 0, last = 0;
    for (const ModelError& e : run.model_error) {
        if (e.start_rank < tenth) {
            first += e.error;
            ++t.first_pairs;
        }
        if (e.start_rank + tenth >= started) {
            last += e.error;
            ++t.last_pairs;
        }
    }
    if (t.first_pairs) t.first_mae = first / static_cast<double>(t.first_pairs);
    if (t.last_pairs) t.last_mae = last / static_cast<double>(t.last_pairs);
    return t;
}

Summary summarize(const std::vector<ReplayJob>& jobs, const PolicyRun& run, int total_gpus) {
    Summary s;
    s.judged = !run.model_error.empty() || run.learned;
    s.learned = run.learned;
    s.model_error = model_error_tenths(run);
    s.pairs_formed = run.model_error.size();
    s.reports = run.reports;
    s.refits = run.refits;
    s.policy = run.policy;
    s.never_started = run.never_started;
    s.events = run.events;
    s.decisions = run.decisions;
    s.backfilled = run.backfilled;
    s.declined = run.declined;
    s.wall_s = run.wall_s;
    std::vector<double> jct;
    jct.reserve(jobs.size());
    double wait = 0, slow = 0, first = jobs.empty() ? 0 : jobs.front().submit, last = first;
    std::size_t slowed = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        const JobOutcome& o = run.jobs[i];
        if (o.end < 0) continue;
        jct.push_back(o.end - jobs[i].submit);
        wait += o.start - jobs[i].submit;
        double sd = (o.end - o.start) / jobs[i].work;
        slow += sd;
        if (sd > 1.1) ++slowed;
        last = std::max(last, o.end);
    }
    s.jobs = jct.size();
    if (s.jobs == 0) return s;
    const double n = static_cast<double>(s.jobs);
    double sum = 0;
    for (double v : jct) sum += v;
    s.mean_jct = sum / n;
    s.mean_wait = wait / n;
    s.mean_slowdown = slow / n;
    s.slowed_share = static_cast<double>(slowed) / n;
    s.p50_jct = percentile(jct, 50);
    s.p95_jct = percentile(jct, 95);
    s.p99_jct = percentile(jct, 99);
    s.makespan = last - first;
    s.gpu_util = s.makespan > 0 && total_gpus > 0 ? run.busy_gpu_seconds / (total_gpus * s.makespan) : 0;
    return s;
}

std::string format_duration(double seconds) {
    char buf[32];
    if (seconds < 90)
        std::snprintf(buf, sizeof buf, "%.0fs", seconds);
    else if (seconds < 5400)
        std::snprintf(buf, sizeof buf, "%.1fm", seconds / 60);
    else if (seconds < 3 * 86400)
        std::snprintf(buf, sizeof buf, "%.2fh", seconds / 3600);
    else
        std::snprintf(buf, sizeof buf, "%.1fd", seconds / 86400);
    return buf;
}

namespace {

std::string change(const Summary& s, const std::vector<Summary>& all, const char* against) {
    for (const Summary& o : all)
        if (o.policy == against && o.mean_jct > 0) {
            if (o.policy == s.policy) return "-";
            char buf[32];
            std::snprintf(buf, sizeof buf, "%+.1f%%", 100.0 * (s.mean_jct - o.mean_jct) / o.mean_jct);
            return buf;
        }
    return "-";
}

std::string percent(double share) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * share);
    return buf;
}

}  // namespace

std::string format_table(const std::vector<Summary>& summaries) {
    const std::vector<std::string> head = {"policy",     "jobs",      "mean JCT",    "p50 JCT",  "p95 JCT",
                                           "p99 JCT",    "mean wait", "makespan",    "GPU util", "slowdown",
                                           "slowed>10%", "vs pack",   "vs exclusive"};
    std::vector<std::vector<std::string>> rows;
    for (const Summary& s : summaries) {
        char sd[32];
        std::snprintf(sd, sizeof sd, "%.3f", s.mean_slowdown);
        rows.push_back({s.policy, std::to_string(s.jobs), format_duration(s.mean_jct), format_duration(s.p50_jct),
                        format_duration(s.p95_jct), format_duration(s.p99_jct), format_duration(s.mean_wait),
                        format_duration(s.makespan), percent(s.gpu_util), sd, percent(s.slowed_share),
                        change(s, summaries, "pack"), change(s, summaries, "exclusive")});
    }
    std::vector<std::size_t> width(head.size());
    for (std::size_t c = 0; c < head.size(); ++c) {
        width[c] = head[c].size();
        for (const auto& r : rows) width[c] = std::max(width[c], r[c].size());
    }
    std::ostringstream out;
    auto line = [&](const std::vector<std::string>& cells) {
        for (std::size_t c = 0; c < cells.size(); ++c) {
            if (c) out << "  ";
            if (c == 0)
                out << cells[c] << std::string(width[c] - cells[c].size(), ' ');
            else
                out << std::string(width[c] - cells[c].size(), ' ') << cells[c];
        }
        out << "\n";
    };
    line(head);
    for (const auto& r : rows) line(r);
    for (const Summary& s : summaries) {
        if (!s.judged) continue;
        char buf[512];
        auto mae = [](double v) { return std::isnan(v) ? std::string("-") : std::to_string(v).substr(0, 5); };
        std::snprintf(buf, sizeof buf,
                      "%s: model error on the %zu pairs it formed (|model speed - truth speed|): first tenth of the "
                      "jobs %s (%zu pairs), last tenth %s (%zu pairs)",
                      s.policy.c_str(), s.pairs_formed, mae(s.model_error.first_mae).c_str(), s.model_error.first_pairs,
                      mae(s.model_error.last_mae).c_str(), s.model_error.last_pairs);
        out << buf;
        if (s.learned)
            out << "; learning on: " << s.reports << " iteration reports, " << s.refits << " elapsed refits\n";
        else
            out << "; learning off\n";
    }
    return out.str();
}

}  // namespace coloc::replay
