#include "replay/gavel_throughputs.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "model/io/csv.hpp"
#include "model/io/gavel_json.hpp"
#include "replay/embedded_data.hpp"

namespace coloc::replay {

namespace {
[[noreturn]] void fail(const std::string& source, int line, const std::string& what) {
    throw std::runtime_error(source + ":" + std::to_string(line) + ": " + what);
}

// The data rows of a table file: comments skipped, the header checked, `n` fields on every row.
template <typename Row>
std::vector<Row> read_rows(std::istream& in, const std::string& source, const std::string& header, std::size_t n,
                           Row (*row)(const std::vector<std::string>&, const std::string&, int)) {
    std::vector<Row> rows;
    std::string text;
    int line = 0;
    bool seen_header = false;
    while (std::getline(in, text)) {
        ++line;
        if (model::io::is_csv_comment(text)) continue;
        auto fields = model::io::split_csv_line(text);
        if (!fields) fail(source, line, "unterminated quote");
        if (!seen_header) {
            if (*fields != *model::io::split_csv_line(header)) fail(source, line, "expected the header " + header);
            seen_header = true;
        } else if (fields->size() != n) {
            fail(source, line, "expected " + std::to_string(n) + " fields, got " + std::to_string(fields->size()));
        } else {
            rows.push_back(row(*fields, source, line));
        }
    }
    if (!seen_header) fail(source, line, "no header line");
    return rows;
}

// strtod rounds correctly: the text written with enough digits gives back the measured double.
double number(const std::string& text, const std::string& source, int line) {
    std::size_t used = 0;
    double v = -1;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (text.empty() || used != text.size() || !std::isfinite(v) || v < 0)
        fail(source, line, "expected a non-negative number, got '" + text + "'");
    return v;
}

GavelSolo solo_row(const std::vector<std::string>& f, const std::string& source, int line) {
    const double scale = number(f[1], source, line);
    if (scale < 1 || scale != std::floor(scale) || scale > 1024) fail(source, line, "bad scale factor '" + f[1] + "'");
    return GavelSolo{f[0], static_cast<int>(scale), number(f[2], source, line), number(f[3], source, line),
                     number(f[4], source, line)};
}

GavelPair pair_row(const std::vector<std::string>& f, const std::string& source, int line) {
    return GavelPair{f[0], f[1], f[2], number(f[3], source, line)};
}
}  // namespace

std::vector<GavelSolo> parse_gavel_solo_csv(std::istream& in, const std::string& source) {
    return read_rows(in, source, "job_type,scale_factor,k80,p100,v100", 5, &solo_row);
}

std::vector<GavelPair> parse_gavel_pairs_csv(std::istream& in, const std::string& source) {
    return read_rows(in, source, "gpu_type,job,neighbour,speed", 4, &pair_row);
}

const std::vector<GavelSolo>& gavel_solo_throughputs() {
    static const std::vector<GavelSolo> table = [] {
        std::istringstream in{std::string(embedded::gavel_solo_csv())};
        return parse_gavel_solo_csv(in, "<built-in data/gavel/solo.csv>");
    }();
    return table;
}

const std::vector<GavelPair>& gavel_pair_speeds() {
    static const std::vector<GavelPair> table = [] {
        std::istringstream in{std::string(embedded::gavel_pairs_csv())};
        return parse_gavel_pairs_csv(in, "<built-in data/gavel/pairs.csv>");
    }();
    return table;
}

double gavel_solo_throughput(const std::string& job_type, int scale_factor, const std::string& gpu_type) {
    for (const GavelSolo& s : gavel_solo_throughputs()) {
        if (s.scale_factor != scale_factor || job_type != s.job_type) continue;
        if (gpu_type == "k80") return s.k80;
        if (gpu_type == "p100") return s.p100;
        if (gpu_type == "v100") return s.v100;
        return 0;
    }
    return 0;
}

model::Measurements gavel_solo_measurements() {
    model::Measurements m;
    for (const GavelSolo& s : gavel_solo_throughputs()) {
        if (s.scale_factor != 1) continue;
        auto n = model::io::gavel_job_name(s.job_type);
        for (auto [gpu, thr] : {std::pair{"k80", s.k80}, {"p100", s.p100}, {"v100", s.v100}})
            if (thr > 0) m.solo.push_back({n.name, n.family, n.batch_size, gpu, thr, 0});
    }
    return m;
}

model::Measurements gavel_measurements() {
    model::Measurements m = gavel_solo_measurements();
    for (const GavelPair& p : gavel_pair_speeds()) {
        if (p.speed <= 0) continue;
        double solo = 0;
        for (const auto& s : m.solo)
            if (s.job == p.job && s.gpu_type == p.gpu_type) solo = s.throughput;
        if (solo > 0) m.pairs.push_back({p.job, p.neighbour, p.gpu_type, model::Sharing::Gpu, p.speed * solo, 0});
    }
    return m;
}

void resolve_gavel_run_times(Trace& trace, const std::string& gpu_type) {
    for (TraceJob& job : trace.jobs) {
        if (job.steps <= 0 || job.run_time > 0) continue;
        if (gpu_type != "k80" && gpu_type != "p100" && gpu_type != "v100")
            throw GpuTypeError("Gavel measured k80, p100 and v100 only, and the jobs of " + trace.source +
                               " take their run times from Gavel's throughputs");
        double thr = gavel_solo_throughput(job.name, job.scale_factor, gpu_type);
        if (thr <= 0) {
            thr = gavel_solo_throughput(job.name, 1, gpu_type);
            if (thr > 0) ++trace.notes["Gavel scale factor not measured: one-GPU throughput used"];
        }
        if (thr <= 0)
            throw TraceError(trace.source, job.line,
                             "job type '" + job.name + "' has no solo throughput on " + gpu_type + " in Gavel's table");
        job.run_time = job.steps / thr;
    }
}

}  // namespace coloc::replay
