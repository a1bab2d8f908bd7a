#include "replay/measured_truth.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "base/files.hpp"
#include "model/io/gavel_json.hpp"
#include "model/io/measurements_csv.hpp"
#include "replay/gavel_throughputs.hpp"

namespace coloc::replay {

int PairTable::add(const std::string& name) {
    auto [it, fresh] = ids_.emplace(name, static_cast<int>(ids_.size()));
    if (fresh) {
        for (auto& row : speed_) row.push_back(-1);
        speed_.emplace_back(ids_.size(), -1.0);
    }
    return it->second;
}

void PairTable::set(const std::string& job, const std::string& neighbour, double speed) {
    int a = add(job), b = add(neighbour);
    double& cell = speed_[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)];
    if (cell < 0) {
        ++measured_;
        if (speed <= 0) ++cannot_corun_;
    }
    cell = std::max(0.0, speed);
}

double PairTable::speed(int job, int neighbour) const {
    if (job < 0 || neighbour < 0) return -1;
    return speed_[static_cast<std::size_t>(job)][static_cast<std::size_t>(neighbour)];
}

int PairTable::index_of(const std::string& name) const {
    auto it = ids_.find(name);
    return it == ids_.end() ? -1 : it->second;
}

double PairTable::median_speed() const {
    std::vector<double> v;
    for (const auto& row : speed_)
        for (double s : row)
            if (s > 0) v.push_back(s);
    if (v.empty()) return 0.5;
    std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
    return v[v.size() / 2];
}

namespace {

// "('ResNet-18 (batch size 16)', 1)" -> job type and scale factor (hand-parsed: std::regex trips
// GCC 12's -Wmaybe-uninitialized in the sanitizer build).
bool parse_gavel_key(const std::string& key, std::string& job, std::string& scale) {
    if (key.size() < 7 || key.compare(0, 2, "('") != 0 || key.back() != ')') return false;
    const auto quote = key.rfind("',");
    if (quote == std::string::npos || quote < 2) return false;
    scale = key.substr(quote + 2, key.size() - quote - 3);
    scale.erase(0, scale.find_first_not_of(' '));
    if (scale.empty() || scale.find_first_not_of("0123456789") != std::string::npos) return false;
    job = key.substr(2, quote - 2);
    return true;
}

}  // namespace

PairTable pair_table_from_gavel_json(const std::string& text, const std::string& source, const std::string& gpu_type) {
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw std::runtime_error(source + ": not Gavel's throughput JSON");
    if (!j.contains(gpu_type)) throw GpuTypeError(source + " has no measurements on it");
    PairTable table(gpu_type);
    for (const auto& [key, entry] : j.at(gpu_type).items()) {
        std::string job_type, scale;
        if (!parse_gavel_key(key, job_type, scale)) throw std::runtime_error(source + ": cannot read job key " + key);
        if (scale != "1" || !entry.is_object()) continue;  // pairs exist for one-GPU jobs only
        const double solo = entry.value("null", 0.0);
        if (solo <= 0) continue;
        const std::string job = model::io::gavel_job_name(job_type).name;
        for (const auto& [other, v] : entry.items()) {
            if (other == "null") continue;
            std::string other_type, other_scale;
            if (!parse_gavel_key(other, other_type, other_scale) || !v.is_array() || v.size() != 2 || !v[0].is_number())
                throw std::runtime_error(source + ": " + gpu_type + ": " + key + " / " + other +
                                         ": expected [this, other]");
            table.set(job, model::io::gavel_job_name(other_type).name, v[0].get<double>() / solo);
        }
    }
    if (table.measured() == 0) throw GpuTypeError(source + " has no same-GPU pairs on it");
    return table;
}

PairTable pair_table_from_measurements(const model::Measurements& m, const std::string& gpu_type) {
    PairTable table(gpu_type);
    for (const auto& p : m.pairs) {
        if (p.gpu_type != gpu_type || p.where != model::Sharing::Gpu) continue;
        double speed = model::normalised_speed(m, p);
        if (std::isnan(speed)) continue;
        table.set(p.job, p.neighbour, speed);
    }
    return table;
}

PairTable builtin_gavel_pair_table(const std::string& gpu_type) {
    PairTable table(gpu_type);
    for (const GavelPair& p : gavel_pair_speeds())
        if (p.gpu_type == gpu_type) table.set(p.job, p.neighbour, p.speed);
    if (table.measured() == 0) throw GpuTypeError("Gavel measured k80, p100 and v100 only");
    return table;
}

PairTable load_pair_table(const std::string& path, const std::string& gpu_type) {
    if (path == "gavel") return builtin_gavel_pair_table(gpu_type);
    std::ifstream in;
    if (auto why = base::open_for_reading(in, path); !why.empty()) throw std::runtime_error(path + ": " + why);
    std::stringstream text;
    text << in.rdbuf();
    std::string s = text.str();
    auto first = s.find_first_not_of(" \t\r\n");
    PairTable table =
        (first != std::string::npos && s[first] == '{') ? pair_table_from_gavel_json(s, path, gpu_type) : [&] {
            std::istringstream csv(s);
            return pair_table_from_measurements(model::io::parse_measurements_csv(csv, path), gpu_type);
        }();
    if (table.measured() == 0) throw GpuTypeError(path + " has no same-GPU pairs on it");
    return table;
}

MeasuredTruth::MeasuredTruth(PairTable table, TruthOptions options)
    : table_(std::move(table)), options_(options), median_(table_.median_speed()) {}

int MeasuredTruth::index(const model::JobProfile& p) const {
    if (p.id >= 0 && p.id < 100000) {
        const std::size_t i = static_cast<std::size_t>(p.id);
        if (i >= by_id_.size()) by_id_.resize(i + 1, {std::string(), -2});
        auto& [name, index] = by_id_[i];
        if (index == -2) {
            name = p.name;
            index = table_.index_of(p.name);
        }
        if (name == p.name) return index;
    }
    auto& [name, index] = ids_[&p];
    if (name != p.name || name.empty()) {
        name = p.name;
        index = table_.index_of(p.name);
    }
    return index;
}

double MeasuredTruth::slowdown(const model::JobProfile& job, std::span<const model::Neighbour> neighbours) const {
    if (neighbours.empty()) return 1.0;
    const bool parallel = job.gpus > 1;
    double gpu = 1.0, rest = 1.0;
    for (const model::Neighbour& n : neighbours) {
        switch (n.where) {
            case model::Sharing::Gpu:
                break;
            case model::Sharing::Island:
                rest += options_.island_cost;
                continue;
            case model::Sharing::Switch:
                rest += options_.switch_cost;
                continue;
            case model::Sharing::Node:
                rest += options_.node_cost;
                continue;
            case model::Sharing::Link:
                rest += options_.link_cost;
                continue;
        }
        double speed = n.profile ? table_.speed(index(job), index(*n.profile)) : -1;
        if (speed < 0) {
            ++misses_;
            speed = median_;
        } else {
            ++hits_;
        }
        double s = speed > 0 ? 1.0 / speed : options_.cannot_corun_slowdown;
        gpu = parallel ? std::max(gpu, s) : gpu + (s - 1.0);
    }
    return gpu * rest;
}

}  // namespace coloc::replay
