#include "replay/plots.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>

#include "base/files.hpp"

namespace coloc::replay {

namespace {

constexpr std::size_t kMaxPoints = 2000;  // per policy and curve: enough for the eye

std::string join(const std::string& dir, const std::string& name) { return dir.empty() ? name : dir + "/" + name; }

// One block per policy (in run order): x, then the share of jobs with at most x. Values below
// `floor` are drawn at it (a log scale has no 0).
void write_cdf(std::ostream& out, const ReplayResult& r, const char* what, double floor,
               const std::function<std::vector<double>(const PolicyRun&)>& values) {
    for (const PolicyRun& run : r.runs) {
        std::vector<double> v = values(run);
        std::sort(v.begin(), v.end());
        out << "# " << run.policy << ": " << what << ", share of jobs at or below it\n";
        if (v.empty()) out << floor << " 0\n";
        const std::size_t step = std::max<std::size_t>(1, v.size() / kMaxPoints);
        for (std::size_t i = 0; i < v.size(); i += step)
            out << std::max(v[i], floor) << " " << static_cast<double>(i + 1) / static_cast<double>(v.size()) << "\n";
        if (!v.empty()) out << std::max(v.back(), floor) << " 1\n";
        out << "\n\n";
    }
}

// Per finished job of `run`: f(job, outcome).
template <typename F>
std::vector<double> per_job(const Workload& w, const PolicyRun& run, F f) {
    std::vector<double> v;
    for (std::size_t i = 0; i < w.jobs.size(); ++i)
        if (run.jobs[i].end >= 0) v.push_back(f(w.jobs[i], run.jobs[i]));
    return v;
}

void write_busy(std::ostream& out, const ReplayResult& r) {
    auto line = [&](const BusyPoint& b) {
        out << b.t / 3600 << " " << b.busy_gpus << " " << b.used_slots << " " << b.shared_gpus << "\n";
    };
    for (const PolicyRun& run : r.runs) {
        out << "# " << run.policy << ": time (hours), busy GPUs, slots in use, GPUs shared by two jobs or more\n";
        if (run.busy.empty()) out << "0 0 0 0\n";
        const std::size_t step = std::max<std::size_t>(1, run.busy.size() / kMaxPoints);
        for (std::size_t i = 0; i < run.busy.size(); i += step) line(run.busy[i]);
        if (!run.busy.empty()) line(run.busy.back());
        out << "\n\n";
    }
}

// A gnuplot string literal (double quotes: backslashes and quotes escaped).
std::string quoted(const std::string& s) {
    std::string q = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') q += '\\';
        q += c;
    }
    return q + "\"";
}

// Policies keep one colour in every plot. coloc, the one under study, gets the strongest colour
// and the thickest line, and is drawn last so that no other policy hides it.
struct Style {
    std::string colour;
    double width;
};
Style style_of(const std::string& policy, std::size_t i) {
    if (policy == "coloc") return {"#d7191c", 3};
    if (policy == "exclusive") return {"#8c8c8c", 1.5};
    if (policy == "slurm") return {"#74a9cf", 1.5};
    if (policy == "pack") return {"#78c679", 1.5};
    if (policy == "spread") return {"#c2a5cf", 1.5};
    static const char* other[] = {"#fdae61", "#80cdc1", "#bf812d"};
    return {other[i % 3], 1.5};
}

// `plot` with one curve per policy from block i of `file`, coloc last.
std::string plot_policies(const ReplayResult& r, const std::string& file, const std::string& using_, const char* with) {
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < r.runs.size(); ++i)
        if (r.runs[i].policy != "coloc") order.push_back(i);
    for (std::size_t i = 0; i < r.runs.size(); ++i)
        if (r.runs[i].policy == "coloc") order.push_back(i);
    std::string plot = "  plot";
    for (std::size_t k = 0; k < order.size(); ++k) {
        const Style st = style_of(r.runs[order[k]].policy, order[k]);
        char width[16];
        std::snprintf(width, sizeof width, "%g", st.width);
        plot += std::string(k ? ", \\\n      " : " ") + quoted(file) + " index " + std::to_string(order[k]) +
                " using " + using_ + " with " + with + " lw " + width + " lc rgb " + quoted(st.colour) + " title " +
                quoted(r.runs[order[k]].policy);
    }
    return plot + "\n";
}

// The runs whose model's error on the pairs formed was recorded (PolicyRun::model_error).
std::vector<std::size_t> judged_runs(const ReplayResult& r) {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < r.runs.size(); ++i)
        if (!r.runs[i].model_error.empty()) out.push_back(i);
    return out;
}

// One block per judged run: the error averaged over consecutive pairs formed (a hundredth of
// them, at least one), at the time the last of them formed.
void write_model_error(std::ostream& out, const ReplayResult& r) {
    for (std::size_t i : judged_runs(r)) {
        const std::vector<ModelError>& e = r.runs[i].model_error;
        out << "# " << r.runs[i].policy
            << ": time (hours), mean |model speed - truth speed| over the pairs formed up to then since the last "
               "line\n";
        const std::size_t step = std::max<std::size_t>(1, e.size() / 100);
        for (std::size_t from = 0; from < e.size(); from += step) {
            const std::size_t to = std::min(e.size(), from + step);
            double sum = 0;
            for (std::size_t k = from; k < to; ++k) sum += e[k].error;
            out << e[to - 1].t / 3600 << " " << sum / static_cast<double>(to - from) << "\n";
        }
        out << "\n\n";
    }
}

std::string plot_model_error(const ReplayResult& r) {
    const std::vector<std::size_t> runs = judged_runs(r);
    std::string plot = "  plot";
    for (std::size_t k = 0; k < runs.size(); ++k) {
        const Style st = style_of(r.runs[runs[k]].policy, runs[k]);
        char width[16];
        std::snprintf(width, sizeof width, "%g", st.width);
        plot += std::string(k ? ", \\\n      " : " ") + quoted("model_error.dat") + " index " + std::to_string(k) +
                " using 1:2 with linespoints pt 7 ps 0.4 lw " + width + " lc rgb " + quoted(st.colour) + " title " +
                quoted(r.runs[runs[k]].policy + (r.runs[runs[k]].learned ? " (learning)" : ""));
    }
    return plot + "\n";
}

int max_of(const ReplayResult& r, int BusyPoint::*field) {
    int m = 0;
    for (const PolicyRun& run : r.runs)
        for (const BusyPoint& b : run.busy) m = std::max(m, b.*field);
    return m;
}

// A title: what the plot shows, then what was replayed, on what cluster, at what load, and
// what decided how fast jobs ran (as a gnuplot string expression, one line each).
std::string title_of(const std::string& what, const ReplayContext& c) {
    std::string trace = c.trace_source;
    if (!trace.empty() && trace[0] != '<') trace = std::filesystem::path(trace).filename().string();
    char load[32];
    std::snprintf(load, sizeof load, "%g", c.load);
    const std::string nl = " . \"\\n\" . ";
    return quoted(what) + nl + quoted(trace + " (" + c.trace_format + ") at load x" + load + " on " + c.cluster) + nl +
           quoted("truth: " + c.truth);
}

void write_script(std::ostream& out, const ReplayResult& r, const ReplayContext& c) {
    auto title = [&](const std::string& what) { return "  set title " + title_of(what, c) + "\n"; };
    const int gpus = std::max(1, c.total_gpus);
    const int slots = std::max(gpus, c.total_slots);
    const int shared = std::max(1, max_of(r, &BusyPoint::shared_gpus));
    out << "# Renders the replay's plots: gnuplot plots.gp (in this directory).\n"
        << "do for [ext in \"svg png\"] {\n"
        << "  if (ext eq \"svg\") { set terminal svg size 960,600 dynamic noenhanced font \"sans,12\" } "
           "else { set terminal pngcairo size 960,600 noenhanced font \"sans,10\" }\n"
        << "  set grid\n"
        << "  set key top left opaque\n"  // a CDF rises to the right: its top left is free
        << "  set yrange [0:1]\n"
        << "  set logscale x\n"
        << "  set output \"jct_cdf.\".ext\n"
        << title("Job completion time (submit to end)") << "  set xlabel \"JCT (hours, log scale)\"\n"
        << "  set ylabel \"share of jobs completed within\"\n"
        << plot_policies(r, "jct_cdf.dat", "1:2", "steps") << "  set output \"wait_cdf.\".ext\n"
        << title("Wait in the queue (submit to start)")
        << "  set xlabel \"wait (hours, log scale; waits under a minute drawn at one minute)\"\n"
        << "  set ylabel \"share of jobs started within\"\n"
        << plot_policies(r, "wait_cdf.dat", "1:2", "steps") << "  unset logscale x\n"
        << "  set output \"slowdown_cdf.\".ext\n"
        << title("Slowdown under interference (run time / solo run time)")
        << "  set xlabel \"slowdown (log scale; 1 = as fast as alone)\"\n"
        << "  set ylabel \"share of jobs slowed by at most\"\n"
        << "  set logscale x\n"
        << "  set xrange [0.97:*]\n"
        << "  set autoscale xfixmax\n"
        << "  set xtics (1, 1.2, 1.5, 2, 3, 5, 10, 20, 50)\n"
        << plot_policies(r, "slowdown_cdf.dat", "1:2", "steps") << "  unset logscale x\n"
        << "  set xrange [*:*]\n"
        << "  set xtics autofreq\n"
        << "  if (ext eq \"svg\") { set terminal svg size 960,900 dynamic noenhanced font \"sans,12\" } "
           "else { set terminal pngcairo size 960,900 noenhanced font \"sans,10\" }\n"
        << "  set output \"busy_gpus.\".ext\n"
        << "  set multiplot layout 3,1 title " << title_of("GPUs and job slots in use over time", c) << "\n"
        << "  unset title\n"
        << "  set key top right\n"
        << "  unset xlabel\n"
        << "  set ylabel \"busy GPUs (of " << gpus << ")\"\n"
        << "  set yrange [0:" << gpus * 1.05 << "]\n"
        << plot_policies(r, "busy_gpus.dat", "1:2", "steps") << "  unset key\n"
        << "  set ylabel \"job slots in use (of " << slots << ")\"\n"
        << "  set yrange [0:" << slots * 1.05 << "]\n"
        << plot_policies(r, "busy_gpus.dat", "1:3", "steps") << "  set xlabel \"time (hours)\"\n"
        << "  set ylabel \"GPUs shared by 2+ jobs\"\n"
        << "  set yrange [0:" << shared * 1.05 << "]\n"
        << plot_policies(r, "busy_gpus.dat", "1:4", "steps") << "  unset multiplot\n"
        << "  set key\n";
    if (!judged_runs(r).empty())
        out << "  if (ext eq \"svg\") { set terminal svg size 960,600 dynamic noenhanced font \"sans,12\" } "
               "else { set terminal pngcairo size 960,600 noenhanced font \"sans,10\" }\n"
            << "  set output \"model_error.\".ext\n"
            << title("Model error on the pairs formed, as they formed (|model speed - truth speed|)")
            << "  set key top right\n"
            << "  set xlabel \"time (hours)\"\n"
            << "  set ylabel \"mean absolute error of the speed\"\n"
            << "  set yrange [0:*]\n"
            << plot_model_error(r);
    out << "  set output\n"
        << "}\n";
}

// Runs gnuplot on the script in `dir`; "" on success, else why not.
std::string run_gnuplot(const std::string& dir) {
    pid_t pid = fork();
    if (pid < 0) return "cannot start gnuplot";
    if (pid == 0) {
        if (chdir(dir.c_str()) != 0) _exit(126);
        int log = open("plots.log", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (log >= 0) {
            dup2(log, 1);
            dup2(log, 2);
        }
        execlp("gnuplot", "gnuplot", "plots.gp", static_cast<char*>(nullptr));
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return "lost gnuplot";
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        return "gnuplot is not installed (apt-get install gnuplot-nox)";
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "gnuplot failed: see " + join(dir, "plots.log");
    // Kept only when it says something (a failure, or gnuplot's warnings).
    std::error_code ignored;
    if (std::filesystem::file_size(join(dir, "plots.log"), ignored) == 0)
        std::filesystem::remove(join(dir, "plots.log"), ignored);
    return "";
}

}  // namespace

PlotFiles write_plots(const std::string& dir, const Workload& workload, const ReplayResult& result,
                      const ReplayContext& context, bool render) {
    PlotFiles files;
    auto write = [&](const char* name, auto&& body) {
        std::ofstream out;
        if (auto why = base::open_for_writing(out, join(dir, name)); !why.empty())
            throw std::runtime_error(join(dir, name) + ": " + why);
        body(out);
        if (!out.flush()) throw std::runtime_error(join(dir, name) + ": cannot write: " + base::os_reason());
        files.written.push_back(join(dir, name));
    };
    using Job = const ReplayJob&;
    using Out = const JobOutcome&;
    auto cdf = [&](const char* what, double floor, auto f) {
        return [&, what, floor, f](std::ostream& o) {
            write_cdf(o, result, what, floor, [&](const PolicyRun& run) { return per_job(workload, run, f); });
        };
    };
    write("jct_cdf.dat", cdf("JCT (hours)", 1e-4, [](Job j, Out x) { return (x.end - j.submit) / 3600; }));
    write("wait_cdf.dat", cdf("wait (hours)", 1.0 / 60, [](Job j, Out x) { return (x.start - j.submit) / 3600; }));
    write("slowdown_cdf.dat", cdf("slowdown", 1.0, [](Job j, Out x) { return (x.end - x.start) / j.work; }));
    write("busy_gpus.dat", [&](std::ostream& o) { write_busy(o, result); });
    const bool judged = !judged_runs(result).empty();
    if (judged) write("model_error.dat", [&](std::ostream& o) { write_model_error(o, result); });
    write("plots.gp", [&](std::ostream& o) { write_script(o, result, context); });
    if (!render) return files;
    files.problem = run_gnuplot(dir);
    if (files.problem.empty())
        for (const char* plot : {"jct_cdf", "wait_cdf", "slowdown_cdf", "busy_gpus", "model_error"}) {
            if (std::string(plot) == "model_error" && !judged) continue;
            for (const char* ext : {".svg", ".png"}) files.written.push_back(join(dir, std::string(plot) + ext));
        }
    return files;
}

}  // namespace coloc::replay
