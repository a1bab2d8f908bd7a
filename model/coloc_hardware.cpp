// ColocModel's same-GPU term per kind of GPU hardware: which reference table and parameters a
// node type's GPUs use, the cached speeds on each, and what it falls back to without data.
#include <algorithm>

#include "model/coloc_model.hpp"
#include "model/features.hpp"

namespace coloc::model {

void ColocModel::set_hardware(std::vector<GpuHardware> hardware, LearnedGpuParams learned) {
    hardware_ = std::move(hardware);
    learned_ = std::move(learned);
    ++version_;
    rebuild_hardware();
}

std::vector<GpuHardware> ColocModel::hardware() const {
    std::vector<GpuHardware> out;
    for (const HardwareView& v : views_) out.push_back(v.hw);
    return out;
}

const ReferenceTable* ColocModel::table_of(const std::string& gpu_type) const {
    for (const ReferenceTable& t : tables_)
        if (t.gpu_type() == gpu_type) return &t;
    return nullptr;
}

void ColocModel::rebuild_hardware(bool cache) {
    ++settled_;  // every path that works the pair predictions out afresh comes through here
    std::vector<GpuHardware> kinds = hardware_;
    if (kinds.empty()) kinds.push_back({params_.gpu_type, params_.gpu.gpu_mem_capacity_gb});
    views_.clear();
    const int n = catalogue_.size();
    cache_size_ = 0;
    for (const GpuHardware& hw : kinds) {
        HardwareView v;
        v.hw = hw;
        for (std::size_t t = 0; t < tables_.size(); ++t)
            if (tables_[t].gpu_type() == hw.gpu_type) v.table = static_cast<int>(t);
        auto it = learned_.find(hw.gpu_type);
        v.gpu = it != learned_.end() ? it->second : params_.gpu;
        v.gpu.gpu_mem_capacity_gb = hw.memory_gb;
        views_.push_back(std::move(v));
    }
    for (HardwareView& v : views_) {
        for (const JobProfile& p : catalogue_.profiles()) v.queries.push_back(query(p, v));
        learn_transfer(v);
        build_residual_table(v);
        if (!cache) continue;
        v.speeds.assign(static_cast<std::size_t>(n) * static_cast<std::size_t>(n), 1.0);
        v.uncertainties.assign(static_cast<std::size_t>(n) * static_cast<std::size_t>(n), 0.0);
        for (int a = 0; a < n; ++a)
            for (int b = 0; b < n; ++b) {
                const Prediction p = gpu_prediction_uncached(catalogue_.at(a), catalogue_.at(b), v);
                v.speeds[static_cast<std::size_t>(a * n + b)] = p.speed;
                v.uncertainties[static_cast<std::size_t>(a * n + b)] = p.uncertainty;
            }
    }
    cache_size_ = cache ? n : 0;
}

const ColocModel::HardwareView& ColocModel::view(int hardware) const {
    return hardware >= 0 && static_cast<std::size_t>(hardware) < views_.size()
               ? views_[static_cast<std::size_t>(hardware)]
               : views_.front();
}

const ReferenceTable* ColocModel::reference() const {
    const int t = views_.empty() ? -1 : views_.front().table;
    return t >= 0 ? &tables_[static_cast<std::size_t>(t)] : nullptr;
}

GpuQuery ColocModel::query(const JobProfile& p, const HardwareView& v) const {
    if (cached(p) && static_cast<std::size_t>(p.id) < v.queries.size())
        return v.queries[static_cast<std::size_t>(p.id)];
    GpuQuery q;
    q.profile = &p;
    q.features = solo_features(p, v.hw.gpu_type);
    if (v.table >= 0) q.ref = tables_[static_cast<std::size_t>(v.table)].index_of(p.name);
    return q;
}

double ColocModel::gpu_speed(const JobProfile& a, const JobProfile& b, int hardware) const {
    const HardwareView& v = view(hardware);
    if (a.id < cache_size_ && b.id < cache_size_ && cached(a) && cached(b))
        return v.speeds[static_cast<std::size_t>(a.id * cache_size_ + b.id)];
    return gpu_prediction_uncached(a, b, v).speed;
}

Prediction ColocModel::gpu_prediction(const JobProfile& a, const JobProfile& b, int hardware) const {
    const HardwareView& v = view(hardware);
    if (a.id < cache_size_ && b.id < cache_size_ && cached(a) && cached(b)) {
        const auto k = static_cast<std::size_t>(a.id * cache_size_ + b.id);
        return {v.speeds[k], v.uncertainties[k]};
    }
    return gpu_prediction_uncached(a, b, v);
}

std::string ColocModel::gpu_data_note(const std::string& gpu_type) const {
    const ReferenceTable* own = table_of(gpu_type);
    if (own && own->measured_pairs() > 0) return "";
    std::string others;
    for (const ReferenceTable& t : tables_)
        if (t.measured_pairs() > 0) others += (others.empty() ? "" : ", ") + t.gpu_type();
    const std::string head = "no same-GPU pairs measured on GPU type '" + gpu_type + "'";
    if (others.empty()) return head + " (nor on any other): its same-GPU term uses the utilisation prior only";
    return head + ": its same-GPU term averages what the pairs measured on " + others + " predict";
}

}  // namespace coloc::model
