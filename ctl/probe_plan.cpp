// colocctl probe's pure parts (ctl/probe_plan.hpp).
#include "ctl/probe_plan.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace coloc::ctl::probe {

namespace {
// Names become file names and CSV cells: keep them to what needs no quoting anywhere.
bool valid_name(const std::string& n) {
    if (n.empty() || n.size() > 100) return false;
    for (char c : n)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) return false;
    return true;
}
}  // namespace

Job parse_job(const std::string& arg) {
    const auto eq = arg.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("--job '" + arg + "': expected NAME=COMMAND");
    Job j{arg.substr(0, eq), arg.substr(eq + 1)};
    if (!valid_name(j.name))
        throw std::invalid_argument("--job '" + arg + "': the name '" + j.name +
                                    "' must be 1 to 100 letters, digits, '.', '_' or '-'");
    if (j.command.find_first_not_of(" \t") == std::string::npos)
        throw std::invalid_argument("--job '" + arg + "': the command is empty");
    return j;
}

void check_jobs(const std::vector<Job>& jobs) {
    if (jobs.empty())
        throw std::invalid_argument("no job to probe: give --job NAME=COMMAND, at least twice for a pair");
    for (std::size_t i = 0; i < jobs.size(); ++i)
        for (std::size_t k = 0; k < i; ++k)
            if (jobs[i].name == jobs[k].name)
                throw std::invalid_argument("--job '" + jobs[i].name + "' is given twice (jobs " +
                                            std::to_string(k + 1) + " and " + std::to_string(i + 1) + ")");
}

std::string Run::label(const std::vector<Job>& jobs) const {
    const std::string& na = jobs.at(static_cast<std::size_t>(a)).name;
    return pair ? "pair " + na + "+" + jobs.at(static_cast<std::size_t>(b)).name : "solo " + na;
}

std::vector<Run> plan_runs(const std::vector<Job>& jobs, int max_pairs) {
    std::vector<Run> runs;
    const int n = static_cast<int>(jobs.size());
    for (int i = 0; i < n; ++i) runs.push_back({false, i, -1});
    int pairs = 0;
    for (int i = 0; i < n; ++i)
        for (int k = i + 1; k < n; ++k) {
            if (max_pairs >= 0 && pairs >= max_pairs) return runs;
            runs.push_back({true, i, k});
            ++pairs;
        }
    return runs;
}

std::vector<Report> reports_from(const nlohmann::json& observations) {
    std::vector<Report> out;
    if (!observations.is_array()) return out;
    for (const nlohmann::json& o : observations) {
        const double t = o.value("iter_time_s", 0.0);
        if (!(t > 0)) continue;
        bool on_gpu = false;
        for (const nlohmann::json& n : o.value("neighbours", nlohmann::json::array()))
            if (n.value("where", std::string()) == "gpu") on_gpu = true;
        out.push_back({t, on_gpu});
    }
    return out;
}

double Mean::mean_s() const { return count > 0 ? sum_s / count : std::numeric_limits<double>::quiet_NaN(); }

void add_reports(Mean& m, const std::vector<Report>& reports, int warmup, bool pair) {
    for (std::size_t i = static_cast<std::size_t>(std::max(warmup, 0)); i < reports.size(); ++i) {
        if (reports[i].beside_on_gpu != pair) continue;
        m.sum_s += reports[i].iter_time_s;
        ++m.count;
    }
}

double speed(const Mean& solo, const Mean& beside) { return solo.mean_s() / beside.mean_s(); }

model::Measurements measurements_from(const std::vector<Job>& jobs, const std::vector<Mean>& solo,
                                      const std::vector<PairResult>& pairs, const std::string& gpu_type) {
    model::Measurements m;
    auto has_solo = [&](int j) {
        return j < static_cast<int>(solo.size()) && solo[static_cast<std::size_t>(j)].count > 0;
    };
    for (int j = 0; j < static_cast<int>(jobs.size()); ++j)
        if (has_solo(j)) {
            model::SoloMeasurement s;
            s.job = jobs[static_cast<std::size_t>(j)].name;
            s.gpu_type = gpu_type;
            s.throughput = 1.0 / solo[static_cast<std::size_t>(j)].mean_s();
            m.solo.push_back(std::move(s));
        }
    for (const PairResult& p : pairs) {
        if (!has_solo(p.a) || !has_solo(p.b) || p.a_beside_b.count == 0 || p.b_beside_a.count == 0) continue;
        const std::string& a = jobs.at(static_cast<std::size_t>(p.a)).name;
        const std::string& b = jobs.at(static_cast<std::size_t>(p.b)).name;
        m.pairs.push_back({a, b, gpu_type, model::Sharing::Gpu, 1.0 / p.a_beside_b.mean_s(), 0});
        m.pairs.push_back({b, a, gpu_type, model::Sharing::Gpu, 1.0 / p.b_beside_a.mean_s(), 0});
    }
    return m;
}

std::optional<Utilisation> parse_nvidia_smi(const std::string& text) {
    std::istringstream in(text);
    std::string line;
    Utilisation u;
    bool first = true;
    while (std::getline(in, line)) {
        double sm = 0, mem = 0;
        char comma = 0;
        std::istringstream l(line);
        // "[N/A]" or a message in place of numbers is no sample.
        if (!(l >> sm >> comma >> mem) || comma != ',' || sm < 0 || sm > 100 || mem < 0 || mem > 100) continue;
        if (first) {
            first = false;
            continue;
        }
        u.sm += sm / 100;
        u.mem += mem / 100;
        ++u.samples;
    }
    if (u.samples == 0) return std::nullopt;
    u.sm /= u.samples;
    u.mem /= u.samples;
    return u;
}

}  // namespace coloc::ctl::probe
