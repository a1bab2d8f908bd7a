// The interface the placement engine calls: predicted slowdown of a job given its neighbours.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/profile.hpp"

namespace coloc::model {

// The tightest resource a neighbour shares with the job, from tightest to loosest.
// Gpu: the same physical GPU (time-slicing / MPS). Island: same NVLink island. Switch: same
// PCIe switch. Node: same host (CPU, host memory, PCIe root). Link: a network link (NIC or
// leaf uplink) used by both jobs' inter-node traffic.
enum class Sharing { Gpu = 0, Island = 1, Switch = 2, Node = 3, Link = 4 };

const char* to_string(Sharing where);
std::optional<Sharing> sharing_from_string(const std::string& text);

// How the engine lists neighbours: each co-located job once, at the tightest intra-node level it
// shares with `job` (Gpu, Island, Switch or Node; a job on the same GPU is not listed again at
// Node), and additionally once more with `Link` when both jobs send inter-node traffic over a
// shared link (NIC or leaf uplink). A neighbour on another node appears only as `Link`.
// Levels are nested: Island implies Switch implies Node for the costs the model charges.
//
// A job on several GPUs runs at the pace of its slowest one (data parallel, synchronous), so
// for a Gpu neighbour it matters which of the job's GPUs it shares: `gpus` has bit i set when
// it shares the job's i-th GPU, counted along the job's own GPU list (node by node, in the
// order of its placements; a job with more than 64 GPUs folds bit i onto i % 64, which can only
// overstate). The default, GPU 0, is right for every one-GPU job. Ignored at other levels.
struct Neighbour {
    const JobProfile* profile = nullptr;
    Sharing where = Sharing::Node;
    // Offset of the neighbour's communication bursts relative to the job's, in seconds, when
    // known; unknown means the model assumes what jobs fall into (in step when periods match).
    std::optional<double> phase_offset_s;
    std::uint64_t gpus = 1;
    // For a Gpu neighbour: which kind of GPU the two share, as an index into the cluster's GPU
    // hardware (model/hardware.hpp: one per node type); 0 = the first. Ignored at other levels.
    std::uint16_t hardware = 0;
};

// The bit of the job's i-th GPU in Neighbour::gpus.
inline std::uint64_t gpu_bit(int i) { return std::uint64_t{1} << (static_cast<unsigned>(i) & 63u); }

// A job's neighbours' delays added up the way a job on several GPUs feels them: per GPU for
// same-GPU neighbours (it runs at its slowest GPU's pace), in one sum for everything it shares
// below the GPU. Kept apart so that the slowdown with one more neighbour is an addition per
// GPU it shares, not a prediction from the whole list again.
struct DelaySum {
    std::uint64_t used = 0;  // the job's GPUs (Neighbour::gpus bits) that have same-GPU delays
    double rest = 0;         // delays of neighbours below the GPU level and on links
    // The delay on GPU g (bit g of `used`; 0 when not set).
    double on(int g) const;

    // No neighbours (storage kept for reuse).
    void clear() {
        used = 0;
        rest = 0;
    }
    // Adds a neighbour's delay: to each GPU in `gpus` (0 counts as GPU 0) when it shares one
    // (where == Gpu), else to `rest`.
    void add(Sharing where, std::uint64_t gpus, double delay);
    // max(1, 1 + the slowest GPU's delay + rest).
    double slowdown() const { return slowdown_with(0, 0, 0); }
    // slowdown() with `on_gpus` more on each GPU in `gpus` and `on_rest` more on rest: one
    // more neighbour (or two, a job beside it and on its link), without changing the sum.
    double slowdown_with(std::uint64_t gpus, double on_gpus, double on_rest) const;

private:
    // Per GPU, meaningful for the bits in `used`: the first few inline (most jobs have at most
    // 8 GPUs, and running jobs' sums are kept), the rest beside.
    static constexpr int kInline = 8;
    std::array<double, kInline> first_{};
    std::vector<double> more_;
    double& slot(int g);
};

class Learner;

// A prediction with how sure the model is of it: `speed` relative to solo (1 / slowdown) and
// `uncertainty`, the standard deviation of that speed as the model sees it (0 = certain; a
// measured pair's is the measurement noise, a guess far from every measured pair's is wide).
struct Prediction {
    double speed = 1;
    double uncertainty = 0;
};

class InterferenceModel {
public:
    virtual ~InterferenceModel() = default;
    // Predicted slowdown of `job` (time relative to solo, >= 1) given its neighbours.
    virtual double slowdown(const JobProfile& job, std::span<const Neighbour> neighbours) const = 0;
    virtual std::string name() const = 0;

    // Whether slowdown() is DelaySum's composition of per-neighbour delays (delay()), so that a
    // caller may add neighbours one at a time instead of predicting from the whole list again.
    virtual bool additive() const { return false; }
    // The delay `n` adds to `job` (only for an additive model).
    virtual double delay(const JobProfile& /*job*/, const Neighbour& /*n*/) const { return 0; }
    // Changes whenever the model's predictions may have changed (learning, new parameters), so
    // that predictions kept by a caller can be dropped.
    virtual std::uint64_t version() const { return 0; }
    // Changes when the model's pair predictions are worked out afresh (new parameters or
    // hardware, pair tables rebuilt from what it learned); not at each online learning step in
    // between, which moves version() alone. A caller that re-prices kept verdicts only when this
    // changes does so at each rebuild instead of after every report.
    virtual std::uint64_t settled_version() const { return version(); }
    // The model's learning side (model/learner.hpp); nullptr for a model that does not learn.
    virtual Learner* learner() { return nullptr; }
    // slowdown() as a speed with its uncertainty; a model that cannot tell says 0.
    virtual Prediction predict(const JobProfile& job, std::span<const Neighbour> neighbours) const {
        return {1.0 / slowdown(job, neighbours), 0.0};
    }
};

// Speed relative to solo, the figure users compare with their measurements.
inline double speed(double slowdown) { return 1.0 / slowdown; }

}  // namespace coloc::model
