// The replay's "truth" from measurements: how fast a job really runs beside its neighbours, read
// from a table of measured same-GPU pairs (e.g. Gavel's), so that a placement is not judged by
// the model that made it.
//
// slowdown(job) = s_gpu * s_rest, where
//   s_gpu: from the measured speed of the job beside each neighbour on its GPU (1/speed). A
//          one-GPU job time-slices with every such neighbour, so their delays add:
//          1 + sum(1/speed_i - 1); a multi-GPU job (data parallel) moves at the pace of its
//          slowest GPU: max(1/speed_i). A pair measured as unable to co-run (Gavel's [0, 0],
//          out of memory) counts as `cannot_corun_slowdown`; a pair not in the table as the
//          table's median speed.
//   s_rest: the neighbours that share less than a GPU (NVLink island, PCIe switch, node, link),
//           which such tables do not measure: 1 + sum of a fixed cost per neighbour by level,
//           0 unless given (TruthOptions), so that the truth holds only what was measured.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/measurements.hpp"
#include "model/model.hpp"

namespace coloc::replay {

// Measured same-GPU speeds (relative to solo) on one GPU type, by catalogue job name.
class PairTable {
public:
    explicit PairTable(std::string gpu_type = "") : gpu_type_(std::move(gpu_type)) {}
    const std::string& gpu_type() const { return gpu_type_; }
    // `speed` = job's speed beside neighbour relative to solo; 0 = the pair could not co-run.
    void set(const std::string& job, const std::string& neighbour, double speed);
    // -1 when not measured.
    double speed(int job, int neighbour) const;
    int index_of(const std::string& name) const;  // -1 when unknown
    std::size_t measured() const { return measured_; }
    std::size_t cannot_corun() const { return cannot_corun_; }
    double median_speed() const;  // of the pairs that could co-run

private:
    int add(const std::string& name);
    std::string gpu_type_;
    std::unordered_map<std::string, int> ids_;
    std::vector<std::vector<double>> speed_;
    std::size_t measured_ = 0, cannot_corun_ = 0;
};

// Gavel's throughput JSON on `gpu_type` (scale factor 1 pairs; names as model::io's Gavel
// reader gives them, e.g. resnet18-b16); throws std::runtime_error naming the file.
PairTable pair_table_from_gavel_json(const std::string& text, const std::string& source, const std::string& gpu_type);
// coloc measurements (same-GPU rows on `gpu_type`, normalised by the job's solo throughput).
PairTable pair_table_from_measurements(const model::Measurements& m, const std::string& gpu_type);
// A file of either kind: JSON = Gavel's, else the measurement CSV (man/coloc-profiles.5); the
// name "gavel" = Gavel's pairs built into coloc (data/gavel/pairs.csv).
PairTable load_pair_table(const std::string& path, const std::string& gpu_type);
PairTable builtin_gavel_pair_table(const std::string& gpu_type);

struct TruthOptions {
    double cannot_corun_slowdown = 5.0;  // a pair measured as unable to co-run
    // Extra slowdown per neighbour sharing an NVLink island, a PCIe switch, the node, a link.
    double island_cost = 0, switch_cost = 0, node_cost = 0, link_cost = 0;
};

class MeasuredTruth final : public model::InterferenceModel {
public:
    explicit MeasuredTruth(PairTable table, TruthOptions options = {});
    double slowdown(const model::JobProfile& job, std::span<const model::Neighbour> neighbours) const override;
    std::string name() const override { return "measured:" + table_.gpu_type(); }
    const PairTable& table() const { return table_; }
    // Same-GPU neighbour pairs looked up so far: found in the table, and not.
    std::size_t lookups_measured() const { return hits_; }
    std::size_t lookups_unmeasured() const { return misses_; }

private:
    int index(const model::JobProfile& p) const;
    PairTable table_;
    TruthOptions options_;
    double median_ = 0.5;
    // Table index by catalogue id (profiles sized for a job keep their catalogue's id and name),
    // other profiles by address; both with the name, to check that the entry is still about
    // the same profile (an address can be reused once a workload is gone).
    mutable std::vector<std::pair<std::string, int>> by_id_;
    mutable std::unordered_map<const model::JobProfile*, std::pair<std::string, int>> ids_;
    mutable std::size_t hits_ = 0, misses_ = 0;
};

}  // namespace coloc::replay
