#include "replay/plots.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

namespace coloc::replay {

namespace {

constexpr std::size_t kMaxPoints = 2000;  // per policy and curve: enough for the eye

std::string join(const std::string& dir, const std::string& name) { return dir.empty() ? name : dir + "/" + name; }

void write_cdf(std::ostream& out, const Workload& w, const ReplayResult& r) {
    for (const PolicyRun& run : r.runs) {
        std::vector<double> jct;
        for (std::size_t i = 0; i < w.jobs.size(); ++i)
            if (run.jobs[i].end >= 0) jct.push_back((run.jobs[i].end - w.jobs[i].submit) / 3600);
        std::sort(jct.begin(), jct.end());
        out << "# " << run.policy << ": JCT (hours), share of jobs done by then\n";
        if (jct.empty()) out << "0 0\n";
        const std::size_t step = std::max<std::size_t>(1, jct.size() / kMaxPoints);
        for (std::size_t i = 0; i < jct.size(); i += step)
            out << std::max(jct[i], 1e-4) << " " << static_cast<double>(i + 1) / static_cast<double>(jct.size()) << "\n";
        if (!jct.empty()) out << jct.back() << " 1\n";
        out << "\n\n";
    }
}

void write_busy(std::ostream& out, const ReplayResult& r) {
    for (const PolicyRun& run : r.runs) {
        out << "# " << run.policy << ": time (hours), busy GPUs, slots in use\n";
        if (run.busy.empty()) out << "0 0 0\n";
        const std::size_t step = std::max<std::size_t>(1, run.busy.size() / kMaxPoints);
        for (std::size_t i = 0; i < run.busy.size(); i += step)
            out << run.busy[i].t / 3600 << " " << run.busy[i].busy_gpus << " " << run.busy[i].used_slots << "\n";
        if (!run.busy.empty())
            out << run.busy.back().t / 3600 << " " << run.busy.back().busy_gpus << " " << run.busy.back().used_slots << "\n";
        out << "\n\n";
    }
}

// Shares of jobs per slowdown bin: [1.0, 1.1), ..., [2.9, 3.0), >= 3.
void write_histogram(std::ostream& out, const Workload& w, const ReplayResult& r) {
    constexpr int kBins = 21;
    std::vector<std::vector<double>> share(r.runs.size(), std::vector<double>(kBins, 0));
    for (std::size_t p = 0; p < r.runs.size(); ++p) {
        std::size_t n = 0;
        for (std::size_t i = 0; i < w.jobs.size(); ++i) {
            const JobOutcome& o = r.runs[p].jobs[i];
            if (o.end < 0) continue;
            double s = (o.end - o.start) / w.jobs[i].work;
            int bin = std::clamp(static_cast<int>((s - 1.0) / 0.1 + 1e-9), 0, kBins - 1);
            share[p][static_cast<std::size_t>(bin)] += 1;
            ++n;
        }
        for (double& v : share[p]) v = n ? v / static_cast<double>(n) : 0;
    }
    out << "# slowdown bin, then the share of each policy's jobs in it:";
    for (const PolicyRun& run : r.runs) out << " " << run.policy;
    out << "\n";
    char label[32];
    for (int b = 0; b < kBins; ++b) {
        if (b == kBins - 1) std::snprintf(label, sizeof label, "\">=3.0\"");
        else std::snprintf(label, sizeof label, "\"%.1f\"", 1.0 + 0.1 * b);
        out << label;
        for (const auto& s : share) out << " " << s[static_cast<std::size_t>(b)];
        out << "\n";
    }
}

void write_script(std::ostream& out, const ReplayResult& r, int total_gpus) {
    std::string names;
    for (const PolicyRun& run : r.runs) names += (names.empty() ? "" : " ") + run.policy;
    const std::size_t n = r.runs.size();
    out << "# Renders the replay's plots: gnuplot plots.gp (in this directory).\n"
        << "policies = \"" << names << "\"\n"
        << "do for [ext in \"svg png\"] {\n"
        << "  if (ext eq \"svg\") { set terminal svg size 960,600 dynamic font \"sans,12\" } "
           "else { set terminal pngcairo size 960,600 font \"sans,10\" }\n"
        << "  set grid\n"
        << "  set output \"jct_cdf.\".ext\n"
        << "  set title \"Job completion time\"\n"
        << "  set xlabel \"JCT (hours, log scale)\"\n"
        << "  set ylabel \"share of jobs completed within\"\n"
        << "  set logscale x\n"
        << "  set key bottom right\n"
        << "  set yrange [0:1]\n"
        << "  plot for [i=0:" << n - 1 << "] \"jct_cdf.dat\" index i using 1:2 with steps lw 2 title word(policies, i+1)\n"
        << "  unset logscale x\n"
        << "  set output \"busy_gpus.\".ext\n"
        << "  set title \"Busy GPUs (of " << total_gpus << ")\"\n"
        << "  set xlabel \"time (hours)\"\n"
        << "  set ylabel \"GPUs running at least one job\"\n"
        << "  set yrange [0:" << total_gpus * 1.05 << "]\n"
        << "  set key top right\n"
        << "  plot for [i=0:" << n - 1 << "] \"busy_gpus.dat\" index i using 1:2 with steps lw 1.5 title word(policies, i+1)\n"
        << "  set output \"slowdown_hist.\".ext\n"
        << "  set title \"Slowdown under interference (run time / solo run time)\"\n"
        << "  set xlabel \"slowdown (bins of 0.1)\"\n"
        << "  set ylabel \"share of jobs\"\n"
        << "  set yrange [0:*]\n"
        << "  set style data histograms\n"
        << "  set style histogram clustered gap 1\n"
        << "  set style fill solid 0.8 border -1\n"
        << "  set xtics rotate by -45\n"
        << "  plot for [i=2:" << n + 1 << "] \"slowdown_hist.dat\" using i:xtic(1) title word(policies, i-1)\n"
        << "  unset style data\n"
        << "  set xtics norotate\n"
        << "  set output\n"
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
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) return "gnuplot is not installed (apt-get install gnuplot-nox)";
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "gnuplot failed: see " + join(dir, "plots.log");
    // Kept only when it says something (a failure, or gnuplot's warnings).
    std::error_code ignored;
    if (std::filesystem::file_size(join(dir, "plots.log"), ignored) == 0)
        std::filesystem::remove(join(dir, "plots.log"), ignored);
    return "";
}

}  // namespace

PlotFiles write_plots(const std::string& dir, const Workload& workload, const ReplayResult& result, int total_gpus,
                      bool render) {
    PlotFiles files;
    auto write = [&](const char* name, auto&& body) {
        std::ofstream out(join(dir, name));
        body(out);
        if (!out) throw std::runtime_error(join(dir, name) + ": cannot be written");
        files.written.push_back(join(dir, name));
    };
    write("jct_cdf.dat", [&](std::ostream& o) { write_cdf(o, workload, result); });
    write("busy_gpus.dat", [&](std::ostream& o) { write_busy(o, result); });
    write("slowdown_hist.dat", [&](std::ostream& o) { write_histogram(o, workload, result); });
    write("plots.gp", [&](std::ostream& o) { write_script(o, result, total_gpus); });
    if (!render) return files;
    files.problem = run_gnuplot(dir);
    if (files.problem.empty())
        for (const char* plot : {"jct_cdf", "busy_gpus", "slowdown_hist"})
            for (const char* ext : {".svg", ".png"}) files.written.push_back(join(dir, std::string(plot) + ext));
    return files;
}

}  // namespace coloc::replay
