// Same-GPU term: the speed of a job (relative to solo) while it shares a GPU with one other job.
//
// Prediction is a kernel regression in solo-feature space over a reference table of measured
// pairs (one per GPU type): to predict job a beside job x, look at how jobs similar to a (same
// family, close batch size, same compute-vs-memory balance across GPU types, close iteration
// time, close SM / memory utilisation) fared beside x, and fit a local linear trend through
// them, weighted by similarity. This is what generalises to job types never measured in a pair
// (bench/model-accuracy, leave-one-job-type-out). A measured value for the exact pair is used
// as is (the refinement). A physics prior from utilisations enters as a pseudo-observation, so
// a job with no similar reference still gets a sensible answer and an empty table works.
#pragma once

#include <array>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/features.hpp"
#include "model/profile.hpp"

namespace coloc::model {

struct GpuShareParams {
    // Kernel bandwidth per feature (in the feature's units), see features.hpp.
    std::array<double, kNumFeatures> bandwidth{1.5, 1.0, 1.0, 0.5, 0.15, 0.15, 1.0};
    double family_penalty = 10;       // squared distance added between different known families
    double ridge = 1.0;               // slope penalty of the local linear fit, per unit of weight
    double prior_weight = 0.02;       // weight of the physics prior as a pseudo-observation
    double slice_overhead = 0.1;      // prior: time-slicing cost on top of the busy-time overlap
    double gpu_mem_capacity_gb = 32;  // prior: two known footprints above this cannot co-run
    double min_speed = 0.02;          // predictions are clamped to [min_speed, 1]
};

// Whether both jobs' GPU memory footprints fit in one GPU of `p`'s memory; default (unknown)
// footprints are no evidence that they do not.
bool footprints_fit(const JobProfile& a, const JobProfile& b, const GpuShareParams& p);

// Physics prior: job a is busy on the GPU a fraction u_a = max(sm_util, mem_bw_util) of its
// solo time; beside b its busy time is stretched by b's busy share: slowdown 1 + u_a u_b (1+k).
// Footprints that do not fit: the pair cannot run (min_speed).
double prior_gpu_speed(const JobProfile& a, const JobProfile& b, const GpuShareParams& p);
// The prior's uncertainty (standard deviation of the speed) where nothing bounds it: about as
// wide as speeds spread.
inline constexpr double kPriorSpeedSd = 0.25;
// The noise of one measured or observed pair's speed: no prediction is surer.
inline constexpr double kMeasuredSpeedSd = 0.03;
// The prior's uncertainty for a and b. Measured utilisations bound where the speed can lie,
// however the GPU is shared (time-sliced or concurrent): a's extra time is at most the time
// the lighter of the two is busy, each moment costing the switch, so a's speed lies between
// 1 / (1 + min(u_a, u_b) (1 + k)) and 1; half that interval is its standard deviation (within
// kMeasuredSpeedSd and kPriorSpeedSd). Defaulted utilisations bound nothing: kPriorSpeedSd.
double prior_gpu_sd(const JobProfile& a, const JobProfile& b, const GpuShareParams& p);
// Whether the prior for a and b is computed from measured utilisations rather than defaults.
bool inputs_measured(const JobProfile& a, const JobProfile& b);
// The group a job is held out with when transfer to jobs never seen is tested: its family, or
// the job itself where no family is given.
std::uint64_t job_group(const JobProfile& p);

// Measured same-GPU speeds on one GPU type among reference jobs.
class ReferenceTable {
public:
    explicit ReferenceTable(std::string gpu_type = "") : gpu_type_(std::move(gpu_type)) {}
    const std::string& gpu_type() const { return gpu_type_; }
    // Adds (or finds) a reference job; returns its index.
    int add_job(const std::string& name, const SoloFeatures& features);
    // The same, making the features only for a job not in the table yet (a table of n jobs is
    // built from n^2 pairs).
    template <class MakeFeatures>
    int add_job_with(const std::string& name, MakeFeatures make) {
        const int i = index_of(name);
        return i >= 0 ? i : add_job(name, make());
    }
    int index_of(const std::string& name) const;
    void set_speed(int job, int neighbour, double speed);  // speed of `job` beside `neighbour`
    double speed(int job, int neighbour) const;            // NaN when not measured
    bool has_speed(int job, int neighbour) const;
    int size() const { return static_cast<int>(names_.size()); }
    const std::string& name(int i) const { return names_[static_cast<std::size_t>(i)]; }
    const SoloFeatures& features(int i) const { return features_[static_cast<std::size_t>(i)]; }
    std::size_t measured_pairs() const { return static_cast<std::size_t>(measured_); }

private:
    double& at(int job, int neighbour);
    double at(int job, int neighbour) const;

    std::string gpu_type_;
    std::vector<std::string> names_;
    std::unordered_map<std::string, int> index_;  // name -> position in names_ (asked for at every prediction)
    std::vector<SoloFeatures> features_;
    std::vector<double> speed_;    // size() x size(), row = job; NaN = not measured
    std::ptrdiff_t measured_ = 0;  // non-NaN entries of speed_
};

// A job as the same-GPU term sees it.
struct GpuQuery {
    const JobProfile* profile = nullptr;
    SoloFeatures features;
    int ref = -1;  // index in the reference table, -1 when not a reference job
};

// What the kernel regression drew on for one pair: its estimate (NaN: no similar measured
// pair), the similarity weight behind it, the effective number of similar measured pairs
// ((sum w)^2 / sum w^2) and the weighted spread (standard deviation) of their values. A pair
// measured as is has `exact` set and the measured value.
struct KernelEstimate {
    double value = 0;
    double weight = 0;
    double n_eff = 0;
    double spread = 0;
    bool exact = false;
    bool valid() const { return weight > 0; }
};

// The kernel regression alone, without the prior, over any table of per-pair values (speeds,
// or what another prediction leaves unexplained).
KernelEstimate kernel_gpu_estimate(const ReferenceTable& table, const GpuQuery& a, const GpuQuery& b, bool same_job,
                                   const GpuShareParams& params);

// The estimate blended with a prior that counts as params.prior_weight of similarity weight.
double blend_with_prior(const KernelEstimate& e, double prior, const GpuShareParams& params);

// Speed of `a` (relative to solo) beside `b` on the table's GPU type, in [min_speed, 1].
// `same_job`: a and b are the same job type (self-pairs behave differently, so they are
// predicted from other self-pairs).
double predict_gpu_speed(const ReferenceTable& table, const GpuQuery& a, const GpuQuery& b, bool same_job,
                         const GpuShareParams& params);

}  // namespace coloc::model
