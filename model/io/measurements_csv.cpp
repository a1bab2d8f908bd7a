#include "model/io/measurements_csv.hpp"

#include <array>
#include <cmath>
#include <fstream>
#include <sstream>

#include "base/files.hpp"
#include "model/io/csv.hpp"

namespace coloc::model::io {

namespace {
constexpr std::array<const char*, 7> kColumns = {"job",       "family", "batch_size", "gpu_type",
                                                 "neighbour", "where",  "throughput"};

[[noreturn]] void fail(const std::string& source, int line, const std::string& what) {
    throw MeasurementError(source + ":" + std::to_string(line) + ": " + what);
}

double number(const std::string& text, const std::string& source, int line, const char* column) {
    std::size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || !std::isfinite(v) || v < 0)
        fail(source, line, std::string("column ") + column + ": expected a non-negative number, got '" + text + "'");
    return v;
}

std::string quote(const std::string& s) {
    if (s.find_first_of(",\"") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

std::string fmt(double v) {
    std::ostringstream o;
    o.precision(10);
    o << v;
    return o.str();
}
}  // namespace

Measurements parse_measurements_csv(std::istream& in, const std::string& source) {
    Measurements m;
    m.source = source;
    std::string text;
    int line = 0;
    bool header = false;
    while (std::getline(in, text)) {
        ++line;
        if (is_csv_comment(text)) continue;
        auto fields = split_csv_line(text);
        if (!fields) fail(source, line, "unterminated quote");
        if (!header) {
            for (std::size_t i = 0; i < kColumns.size(); ++i)
                if (i >= fields->size() || (*fields)[i] != kColumns[i])
                    fail(source, line,
                         std::string("expected the header job,family,batch_size,gpu_type,neighbour,where,throughput"));
            header = true;
            continue;
        }
        if (fields->size() != kColumns.size())
            fail(source, line, "expected 7 fields, got " + std::to_string(fields->size()));
        const auto& f = *fields;
        if (f[0].empty()) fail(source, line, "column job: empty");
        if (f[3].empty()) fail(source, line, "column gpu_type: empty");
        const double thr = number(f[6], source, line, "throughput");
        if (f[4].empty()) {
            const double batch = f[2].empty() ? 0 : number(f[2], source, line, "batch_size");
            m.solo.push_back(SoloMeasurement{f[0], f[1], batch, f[3], thr, line});
        } else {
            auto where = sharing_from_string(f[5].empty() ? "gpu" : f[5]);
            if (!where)
                fail(source, line, "column where: expected gpu, island, switch, node or link, got '" + f[5] + "'");
            m.pairs.push_back(PairMeasurement{f[0], f[4], f[3], *where, thr, line});
        }
    }
    if (!header) fail(source, line, "no header line");
    return m;
}

Measurements read_measurements_csv(const std::string& path) {
    std::ifstream in;
    if (auto why = base::open_for_reading(in, path); !why.empty()) throw MeasurementError(path + ": " + why);
    return parse_measurements_csv(in, path);
}

void write_measurements_csv(std::ostream& out, const Measurements& m) {
    out << "job,family,batch_size,gpu_type,neighbour,where,throughput\n";
    for (const SoloMeasurement& s : m.solo)
        out << quote(s.job) << ',' << quote(s.family) << ',' << (s.batch_size > 0 ? fmt(s.batch_size) : "") << ','
            << s.gpu_type << ",,," << fmt(s.throughput) << '\n';
    for (const PairMeasurement& p : m.pairs)
        out << quote(p.job) << ",,," << p.gpu_type << ',' << quote(p.neighbour) << ',' << to_string(p.where) << ','
            << fmt(p.throughput) << '\n';
}

}  // namespace coloc::model::io
