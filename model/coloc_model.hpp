// coloc's interference model: same-GPU, same-node and shared-link terms, calibrated online.
//
//   slowdown(job) = max(1, 1 + max_{g in the job's GPUs} gpu(g)
//                           + th_node * sum_{n on island/switch/node} node_delta(job, n)
//                           + th_link * sum_{n on a shared link}     link_delta(job, n)
//                           + sum_{n below the GPU level} residual(job, n, level))
//   gpu(g) = sum_{n on GPU g} (th_gpu * (1/speed_gpu(job, n) - 1) + residual(job, n, gpu))
// speed_gpu: gpu_share.hpp; node_delta: node_share.hpp; link_delta: phase.hpp. Neighbours on one
// GPU add their delays (time-slicing: each one takes its share of the GPU away from the job); a
// job on several GPUs moves at the pace of its slowest one (Neighbour::gpus says which GPUs a
// neighbour shares), while what it shares below the GPU is shared by all its GPUs and adds up.
// A one-GPU job has one g: the sum over all its Gpu neighbours. Learning (observe) fits the
// same composition: only the neighbours on the slowest GPU and those below the GPU level.
// th and the residuals are learned from observations (learner.hpp); everything the model has
// learned is in params_json().
//
// Hot path: slowdown() allocates nothing. Same-GPU speeds between catalogue profiles are
// precomputed (per profile-id pair) for each kind of GPU hardware (model/hardware.hpp): a Gpu
// neighbour's `hardware` says on which kind of GPU the two jobs meet.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <vector>

#include "model/catalogue.hpp"
#include "model/gpu_share.hpp"
#include "model/hardware.hpp"
#include "model/learner.hpp"
#include "model/model.hpp"
#include "model/node_share.hpp"
#include "model/observed_pairs.hpp"
#include "model/pair_effects.hpp"
#include "model/phase.hpp"

namespace coloc::model {

struct ColocParams {
    std::string gpu_type = "v100";  // GPU type of the nodes: selects the reference table
    GpuShareParams gpu;
    NodeShareParams node;
    double rls_prior_var = 0.05;      // prior variance of the term scale factors (sd ~0.22)
    double rls_noise_var = 0.04;      // variance of an observed slowdown around the model's
    double rls_forgetting = 1.0;      // 1 = no forgetting; < 1 favours recent observations
    double residual_min_rate = 0.05;  // slowest update rate of a pair residual
};

// Each term's share of a prediction (what `colocctl explain` shows); `gpu` is the slowest GPU's.
struct Contributions {
    double gpu = 0, topo = 0, link = 0, residual = 0;
    double slowdown() const;
};

// How far a prediction x made from other GPU types' pairs was shown to carry over among them:
// speed = prior + offset + weight * (x - prior), with the error that left. `measured_inputs`:
// whether the pairs it was shown on had their jobs' utilisations measured (so the prior's level
// that `offset` corrects was computed from measurements, not from defaults).
struct TransferFit {
    double weight = 1, offset = 0, error = 0;
    bool measured_inputs = false;
};

class ColocModel final : public InterferenceModel, public Learner {
public:
    ColocModel();  // empty catalogue: the physics priors only
    explicit ColocModel(ProfileCatalogue catalogue, ColocParams params = {});

    double slowdown(const JobProfile& job, std::span<const Neighbour> neighbours) const override;
    std::string name() const override { return "coloc"; }
    bool additive() const override { return true; }
    double delay(const JobProfile& job, const Neighbour& n) const override;
    std::uint64_t version() const override { return version_; }
    // Each rebuild of the pair tables: the same-GPU pairs observed join them only then (a
    // tenth of them new or moved, coloc_transfer.cpp; each elapsed refit). The calibration and
    // the residuals learn at every report, between rebuilds.
    std::uint64_t settled_version() const override { return settled_; }
    Learner* learner() override { return this; }
    // Every neighbour's delay (calibrated term and pair residual) added up; slowdown() is its
    // DelaySum::slowdown().
    DelaySum delays(const JobProfile& job, std::span<const Neighbour> neighbours) const;

    Contributions contributions(const JobProfile& job, std::span<const Neighbour> neighbours) const;
    // Speed of `job` relative to solo beside `neighbour` on one GPU of hardware index
    // `hardware` (0: the first), before calibration and residuals.
    double gpu_speed(const JobProfile& job, const JobProfile& neighbour, int hardware = 0) const;
    // The same with its uncertainty (model/coloc_transfer.cpp says how both are made).
    Prediction gpu_prediction(const JobProfile& job, const JobProfile& neighbour, int hardware = 0) const;
    // The speed with every neighbour and its uncertainty: each neighbour's delay uncertainty
    // (same-GPU: from the kernel regression; node and link: from the calibration's variance)
    // added in quadrature over the neighbours the prediction is made of.
    Prediction predict(const JobProfile& job, std::span<const Neighbour> neighbours) const override;
    const ObservedPairs& observed_pairs() const { return observed_; }

    // The GPUs per hardware index (Neighbour::hardware: a cluster's node types) and the same-GPU
    // parameters learned per GPU type (coloc_hardware.cpp). Until set, one kind: params().gpu_type
    // with params().gpu's memory. An index beyond the list is the first kind.
    void set_hardware(std::vector<GpuHardware> hardware, LearnedGpuParams learned = {});
    std::vector<GpuHardware> hardware() const;  // as used, never empty
    // "" when same-GPU pairs were measured on `gpu_type`; else one line on what the same-GPU
    // term falls back to there.
    std::string gpu_data_note(const std::string& gpu_type) const;

    // Learns from one observation: `job` ran `measured_slowdown` times slower than solo with
    // exactly these neighbours.
    void observe(const JobProfile& job, std::span<const Neighbour> neighbours, double measured_slowdown) override;
    // Same-GPU pairs the interval regression settles (evidence >= 1, catalogue profiles) are kept
    // apart from the pairs observed live, which win where both exist (model/coloc_elapsed.cpp).
    IntervalFit learn_elapsed(const std::vector<EndedRun>& runs, const IntervalOptions& options,
                              const std::string& gpu_type) override;
    const ObservedPairs& elapsed_pairs() const { return elapsed_; }

    // Everything fitted or learned, and the hyper-parameters; load_params_json accepts what
    // params_json produced (missing keys keep their current values; throws on wrong types).
    nlohmann::json params_json() const override;
    void load_params_json(const nlohmann::json& params) override;
    // A copy of the whole model: restore() puts it back as it was.
    std::unique_ptr<Saved> save() const override;
    void restore(std::unique_ptr<Saved> saved) override;

    const ColocParams& params() const { return params_; }
    void set_params(const ColocParams& params);  // rebuilds the caches
    const ProfileCatalogue& catalogue() const { return catalogue_; }
    const Calibration& calibration() const { return calibration_; }
    const ReferenceTable* reference() const;  // table of the first hardware's GPU type, if any

private:
    // One kind of GPU hardware: its reference table, its same-GPU parameters (memory included)
    // and the same-GPU speeds between catalogue profiles on it.
    struct HardwareView {
        GpuHardware hw;
        int table = -1;  // index in tables_, -1 when none
        GpuShareParams gpu;
        std::vector<GpuQuery> queries;      // per catalogue id
        std::vector<double> speeds;         // cache_size_^2
        std::vector<double> uncertainties;  // cache_size_^2, of those speeds
        // When other types have pairs too: the own type's pairs less the transfer prediction, as
        // per-job effects (pair_effects.hpp) and what those leave per pair, for the kernel
        // regression (coloc_transfer.cpp).
        PairEffects effects;
        ReferenceTable residual_table;
        std::vector<double> residual_squares;  // its pairs squared, in table order: read per prediction
        bool transfer = false;
        // How far the other types' prediction carries over (transfer_calibration.cpp): for jobs
        // they measured, and for jobs they never saw.
        TransferFit seen_jobs, new_jobs;
    };

    // Works the reference tables and hardware views out afresh; `cache`: the pair predictions
    // too (false: each is worked out when asked, as for a profile outside the catalogue).
    void rebuild(bool cache = true);
    void rebuild_hardware(bool cache = true);
    const HardwareView& view(int hardware) const;
    const ReferenceTable* table_of(const std::string& gpu_type) const;
    GpuQuery query(const JobProfile& p, const HardwareView& v) const;
    bool cached(const JobProfile& p) const;
    Prediction gpu_prediction_uncached(const JobProfile& a, const JobProfile& b, const HardwareView& v) const;
    // The prediction on `v` for a GPU type with no pair of its own, from the other types' tables.
    Prediction transfer_prediction(const JobProfile& a, const JobProfile& b, bool same, const HardwareView& v) const;
    // The tables of the types other than v's (and `skip`) that hold measured pairs.
    std::vector<const ReferenceTable*> other_tables(const HardwareView& v, const std::string& skip = "") const;
    // Those tables' prediction as is; a job of `unseen_group` counts as one they never measured.
    Prediction pooled_prediction(const JobProfile& a, const JobProfile& b, bool same, const HardwareView& v,
                                 const std::vector<const ReferenceTable*>& tables,
                                 std::uint64_t unseen_group = 0) const;
    // Whether some other type measured pairs of both jobs: then seen_jobs applies, else new_jobs.
    bool seen_elsewhere(const JobProfile& a, const JobProfile& b, const HardwareView& v) const;
    // Fits both; they depend only on the other types' tables, so they are kept, per GPU type,
    // until those tables (or their jobs' profiles, or the same-GPU parameters) change.
    void learn_transfer(HardwareView& v);
    std::uint64_t transfer_inputs(const HardwareView& v) const;
    TransferFit learn_seen_jobs(const HardwareView& v) const;
    TransferFit learn_new_jobs(const HardwareView& v) const;
    void merge_observed();                             // observed pairs into their types' tables
    void build_residual_table(HardwareView& v) const;  // v's own pairs less the transfer prediction
    bool learn_gpu_pair(const JobProfile& job, const Neighbour& n, double measured);
    // The table speed that, through the calibrated term and the pair's residual, gives `measured`.
    double table_speed(const JobProfile& job, const JobProfile& other, double measured) const;
    double delta(const JobProfile& job, const Neighbour& n, int& term) const;
    // Whether `p` is the catalogue's own profile or a copy of it (its serial; a copy may differ
    // in size alone): what is kept per profile serves it. A profile of the same name from
    // elsewhere may differ in anything.
    bool own(const JobProfile& p) const;
    Burst burst_of(const JobProfile& p) const;  // link_burst(p), kept for own profiles
    // Bit index of the job's GPU whose Gpu neighbours slow it most; -1 when they all share one
    // GPU (or there are none), so every neighbour counts.
    int slowest_gpu(const JobProfile& job, std::span<const Neighbour> neighbours) const;
    double residual(const JobProfile& job, const Neighbour& n, int term) const;

    ProfileCatalogue catalogue_;
    ColocParams params_;
    std::vector<ReferenceTable> tables_;
    std::vector<GpuHardware> hardware_;  // as set; empty = params_'s one kind
    LearnedGpuParams learned_;
    std::vector<HardwareView> views_;     // per hardware index, never empty after rebuild()
    std::vector<std::uint64_t> serials_;  // per catalogue id: JobProfile::serial
    // Per catalogue id: link_burst() on one GPU and on several, off the prediction path.
    std::vector<std::array<Burst, 2>> bursts_;
    ObservedPairs observed_;
    ObservedPairs elapsed_;  // settled by learn_elapsed, replaced by its next call
    struct KeptTransfer {
        std::uint64_t inputs = 0;  // transfer_inputs() they were fitted on
        TransferFit seen_jobs, new_jobs;
    };
    std::map<std::string, KeptTransfer> kept_transfer_;  // per GPU type
    int cache_size_ = 0;
    Calibration calibration_;
    PairResiduals residuals_;
    std::uint64_t version_ = 0;
    std::uint64_t settled_ = 0;  // rebuild_hardware() calls
    int pending_pairs_ = 0;      // measured pairs new or moved since the tables were last rebuilt
};

}  // namespace coloc::model
