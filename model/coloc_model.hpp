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
// precomputed (per profile-id pair) for the configured GPU type.
#pragma once

#include <array>

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <vector>

#include "model/catalogue.hpp"
#include "model/gpu_share.hpp"
#include "model/learner.hpp"
#include "model/model.hpp"
#include "model/node_share.hpp"
#include "model/observed_pairs.hpp"
#include "model/pair_effects.hpp"

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

class ColocModel final : public InterferenceModel, public Learner {
public:
    ColocModel();  // empty catalogue: the physics priors only
    explicit ColocModel(ProfileCatalogue catalogue, ColocParams params = {});

    double slowdown(const JobProfile& job, std::span<const Neighbour> neighbours) const override;
    std::string name() const override { return "coloc"; }
    bool additive() const override { return true; }
    double delay(const JobProfile& job, const Neighbour& n) const override;
    std::uint64_t version() const override { return version_; }
    Learner* learner() override { return this; }
    // Every neighbour's delay (calibrated term and pair residual) added up; slowdown() is its
    // DelaySum::slowdown().
    DelaySum delays(const JobProfile& job, std::span<const Neighbour> neighbours) const;

    Contributions contributions(const JobProfile& job, std::span<const Neighbour> neighbours) const;
    // Speed of `job` relative to solo beside `neighbour` on one GPU of the configured type,
    // before calibration and residuals.
    double gpu_speed(const JobProfile& job, const JobProfile& neighbour) const;
    // The same with its uncertainty (model/coloc_transfer.cpp says how both are made).
    Prediction gpu_prediction(const JobProfile& job, const JobProfile& neighbour) const;
    // The speed with every neighbour and its uncertainty: each neighbour's delay uncertainty
    // (same-GPU: from the kernel regression; node and link: from the calibration's variance)
    // added in quadrature over the neighbours the prediction is made of.
    Prediction predict(const JobProfile& job, std::span<const Neighbour> neighbours) const override;
    const ObservedPairs& observed_pairs() const { return observed_; }

    // Learns from one observation: `job` ran `measured_slowdown` times slower than solo with
    // exactly these neighbours.
    void observe(const JobProfile& job, std::span<const Neighbour> neighbours, double measured_slowdown) override;

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
    const ReferenceTable* reference() const;  // table of the configured GPU type, if any

private:
    void rebuild();
    GpuQuery query(const JobProfile& p) const;
    bool cached(const JobProfile& p) const;
    Prediction gpu_prediction_uncached(const JobProfile& a, const JobProfile& b) const;
    // The prediction for a GPU type with no pair of its own, from the other types' tables.
    Prediction transfer_prediction(const JobProfile& a, const JobProfile& b, bool same) const;
    void merge_observed();        // observed pairs into their types' tables
    void build_residual_table();  // the own type's pairs less the transfer prediction
    bool learn_gpu_pair(const JobProfile& job, const Neighbour& n, double measured);
    double delta(const JobProfile& job, const Neighbour& n, int& term) const;
    // Bit index of the job's GPU whose Gpu neighbours slow it most; -1 when they all share one
    // GPU (or there are none), so every neighbour counts.
    int slowest_gpu(const JobProfile& job, std::span<const Neighbour> neighbours) const;
    double residual(const JobProfile& job, const Neighbour& n, int term) const;

    ProfileCatalogue catalogue_;
    ColocParams params_;
    std::vector<ReferenceTable> tables_;
    int table_ = -1;                      // index in tables_ of params_.gpu_type
    std::vector<std::uint64_t> serials_;  // per catalogue id: JobProfile::serial
    std::vector<GpuQuery> queries_;       // per catalogue id
    std::vector<double> gpu_cache_;       // size^2 same-GPU speeds
    std::vector<double> unc_cache_;       // size^2 their uncertainties
    ObservedPairs observed_;
    // The own type's measured pairs less what the other types predict for them, when both
    // exist: the own type's evidence as a correction to the transfer prediction.
    // The own type's pairs less the transfer prediction, as per-job effects (pair_effects.hpp),
    // and what those leave per pair, for the kernel regression.
    PairEffects effects_;
    ReferenceTable residual_table_;
    bool transfer_ = false;
    int cache_size_ = 0;
    Calibration calibration_;
    PairResiduals residuals_;
    std::uint64_t version_ = 0;
};

}  // namespace coloc::model
