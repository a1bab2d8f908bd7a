// Online learning from observations: a job's measured slowdown beside a known neighbour set.
//
// Two layers. (1) Calibration: weighted recursive least squares on one scale factor per term
// (slowdown = 1 + theta . deltas), started at theta = 1 with a prior of variance prior_var
// against observation noise noise_var. The global scale should follow evidence from many
// different pairs, not one pair seen a thousand times, so the n-th sighting of the same pair
// weighs 1/n^2 (every pair adds at most pi^2/6 observations' worth). (2) Pair residuals: what
// the calibrated terms leave for a recurring (job, neighbour, level) is averaged into a
// correction, so the prediction for that pair converges to what was observed. Both persist
// through params JSON.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/eigen.hpp"
#include "model/interval_regression.hpp"
#include "model/model.hpp"

namespace coloc::model {

enum Term : int { kGpuTerm = 0, kTopoTerm, kLinkTerm, kNumTerms };
using TermVector = Eigen::Matrix<double, kNumTerms, 1>;
using TermMatrix = Eigen::Matrix<double, kNumTerms, kNumTerms>;

const char* term_name(int term);

class Calibration {
public:
    explicit Calibration(double prior_var = 0.05, double noise_var = 0.04, double forgetting = 1.0);
    const TermVector& theta() const { return theta_; }
    const TermMatrix& covariance() const { return P_; }
    long updates() const { return n_; }
    // One RLS step: fit theta . deltas to `target` (observed extra slowdown), with `weight`.
    void update(const TermVector& deltas, double target, double weight = 1.0);
    void set_state(const TermVector& theta, const TermMatrix& P, long n);
    double forgetting() const { return forgetting_; }

private:
    TermVector theta_ = TermVector::Ones();
    TermMatrix P_;
    double forgetting_;
    long n_ = 0;
};

struct Residual {
    double value = 0;  // additive slowdown correction
    long n = 0;        // observations averaged into it
};

class PairResiduals {
public:
    explicit PairResiduals(double min_rate = 0.05) : min_rate_(min_rate) {}
    double get(int job, int neighbour, int term) const;
    long count(int job, int neighbour, int term) const;
    // Moves the residual towards `error` by a running-mean step (at least min_rate, so a pair
    // whose behaviour changes is tracked).
    void add(int job, int neighbour, int term, double error);
    void set(int job, int neighbour, int term, Residual r);
    const std::unordered_map<std::uint64_t, Residual>& all() const { return map_; }
    static std::uint64_t key(int job, int neighbour, int term);
    static void unkey(std::uint64_t k, int& job, int& neighbour, int& term);
    void clear() {
        map_.clear();
        dense_.clear();
        dense_ids_ = 0;
    }

private:
    // get() is on the prediction path: residuals between profiles of small ids are also kept
    // in a dense table, read without hashing (the map stays what is iterated and saved).
    static constexpr int kDenseIds = 128;
    std::size_t dense_at(int job, int neighbour, int term) const;
    Residual* dense_slot(int job, int neighbour, int term);
    const Residual* find(int job, int neighbour, int term) const;
    std::unordered_map<std::uint64_t, Residual> map_;
    std::vector<Residual> dense_;  // [(job * dense_ids_ + neighbour) * 4 + term]
    int dense_ids_ = 0;            // ids below this are all in dense_
    double min_rate_;
};

// A model that learns from observations, as colocd drives it (InterferenceModel::learner()):
// what it learned travels as params JSON, and an observation that cannot be stored is undone.
class Learner {
public:
    // What was learned up to some point; only the learner that saved it reads it.
    class Saved {
    public:
        virtual ~Saved() = default;
    };

    virtual ~Learner() = default;
    // Learns from one observation: `job` ran `measured_slowdown` times slower than solo with
    // exactly these neighbours.
    virtual void observe(const JobProfile& job, std::span<const Neighbour> neighbours, double measured_slowdown) = 0;
    // Learns pair delays from ended jobs' elapsed times over the intervals they shared
    // (interval_regression.hpp). The prior is the model without what earlier calls learned (that
    // evidence is in `runs` again); what the evidence settles replaces what they learned for
    // `gpu_type`, the GPU type the runs ran on. Returns the fit: pairs, runs used and left out.
    virtual IntervalFit learn_elapsed(const std::vector<EndedRun>& runs, const IntervalOptions& options,
                                      const std::string& gpu_type) = 0;
    virtual nlohmann::json params_json() const = 0;
    // Accepts what params_json produced; throws, changing nothing, on a bad document.
    virtual void load_params_json(const nlohmann::json& params) = 0;
    virtual std::unique_ptr<Saved> save() const = 0;
    // Back to what save() returned, exactly (predictions and version()).
    virtual void restore(std::unique_ptr<Saved> saved) = 0;
};

}  // namespace coloc::model
