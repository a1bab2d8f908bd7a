#include "model/io/gavel_json.hpp"
#include "base/files.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace coloc::model::io {

namespace {
bool all_digits(const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// "('ResNet-18 (batch size 16)', 1)" -> job type and scale factor. (Hand-parsed: std::regex
// trips GCC 12's -Wmaybe-uninitialized under the sanitizer build.)
bool parse_key(const std::string& key, std::string& job, int& scale) {
    if (key.size() < 7 || key.compare(0, 2, "('") != 0 || key.back() != ')') return false;
    const auto quote = key.rfind("',");
    if (quote == std::string::npos || quote < 2) return false;
    std::string num = key.substr(quote + 2, key.size() - quote - 3);
    num.erase(0, num.find_first_not_of(' '));
    if (!all_digits(num) || num.size() > 6) return false;
    job = key.substr(2, quote - 2);
    scale = std::stoi(num);
    return true;
}

std::string slug(const std::string& s) {
    std::string out;
    for (char c : s)
        if (std::isalnum(static_cast<unsigned char>(c)))
            out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}
}  // namespace

GavelJobName gavel_job_name(const std::string& job_type) {
    static const std::string marker = " (batch size ";
    GavelJobName n;
    const auto at = job_type.rfind(marker);
    const std::string batch = at == std::string::npos || job_type.back() != ')'
                                  ? ""
                                  : job_type.substr(at + marker.size(), job_type.size() - at - marker.size() - 1);
    if (all_digits(batch) && batch.size() < 9) {
        n.family = slug(job_type.substr(0, at));
        n.batch_size = std::stod(batch);
        n.name = n.family + "-b" + batch;
    } else {
        n.family = slug(job_type);
        n.name = n.family;
    }
    return n;
}

Measurements measurements_from_gavel_json(const std::string& text, const std::string& source) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        throw std::runtime_error(source + ": " + e.what());
    }
    if (!j.is_object()) throw std::runtime_error(source + ": expected an object of GPU types");
    Measurements m;
    m.source = source;
    for (const char* gpu : {"k80", "p100", "v100"}) {
        if (!j.contains(gpu)) continue;
        for (const auto& [key, entry] : j.at(gpu).items()) {
            std::string job;
            int scale = 0;
            if (!parse_key(key, job, scale))
                throw std::runtime_error(source + ": " + gpu + ": cannot read job key " + key);
            if (scale != 1) continue;  // only single-GPU jobs were measured in pairs
            const GavelJobName n = gavel_job_name(job);
            const double solo = entry.value("null", 0.0);
            if (solo > 0) m.solo.push_back(SoloMeasurement{n.name, n.family, n.batch_size, gpu, solo, 0});
            for (const auto& [other_key, v] : entry.items()) {
                if (other_key == "null") continue;
                std::string other;
                int other_scale = 0;
                if (!parse_key(other_key, other, other_scale))
                    throw std::runtime_error(source + ": " + gpu + ": cannot read job key " + other_key);
                if (!v.is_array() || v.size() != 2)
                    throw std::runtime_error(source + ": " + gpu + ": " + key + " / " + other_key +
                                             ": expected [this, other]");
                const double mine = v[0].get<double>();
                if (mine <= 0) continue;  // [0.0, 0.0]: the pair could not co-run
                m.pairs.push_back(PairMeasurement{n.name, gavel_job_name(other).name, gpu, Sharing::Gpu, mine, 0});
            }
        }
    }
    return m;
}

Measurements read_gavel_json(const std::string& path) {
    std::ifstream in;
    if (auto why = base::open_for_reading(in, path); !why.empty()) throw std::runtime_error(path + ": " + why);
    std::stringstream ss;
    ss << in.rdbuf();
    return measurements_from_gavel_json(ss.str(), path);
}

}  // namespace coloc::model::io
