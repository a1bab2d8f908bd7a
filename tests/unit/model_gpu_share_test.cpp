// Same-GPU term: measured pairs as is, unseen jobs from solo features, the prior as fallback.
#include <doctest/doctest.h>

#include <cmath>

#include "model/gpu_share.hpp"

using namespace coloc::model;

namespace {
JobProfile job(const std::string& name, const std::string& family, double batch, double k80, double v100) {
    JobProfile p;
    p.name = name;
    p.family = family;
    p.batch_size = batch;
    p.solo_throughput = {{"k80", k80}, {"v100", v100}};
    p.known = {{"family", true}, {"batch_size", true}, {"solo_throughput", true}};
    return p;
}

GpuQuery q(const JobProfile& p, const ReferenceTable& t) {
    return GpuQuery{&p, solo_features(p, t.gpu_type()), t.index_of(p.name)};
}
}  // namespace

TEST_CASE("prior: busier neighbours hurt more; two footprints above GPU memory cannot co-run") {
    GpuShareParams params;
    JobProfile light, heavy;
    light.sm_util = 0.2;
    light.mem_bw_util = 0.1;
    heavy.sm_util = 0.95;
    heavy.mem_bw_util = 0.5;
    CHECK(prior_gpu_speed(light, heavy, params) > prior_gpu_speed(heavy, heavy, params));
    CHECK(prior_gpu_speed(heavy, heavy, params) == doctest::Approx(1 / (1 + 0.95 * 0.95 * 1.1)));
    heavy.gpu_mem_gb = 20;
    CHECK(prior_gpu_speed(heavy, heavy, params) > params.min_speed);  // a default is no evidence
    heavy.known["gpu_mem_gb"] = true;
    CHECK(prior_gpu_speed(heavy, heavy, params) == params.min_speed);
}

TEST_CASE("prior's uncertainty: as wide as the lighter job's busy time lets the speed fall; flat on defaults") {
    GpuShareParams params;
    JobProfile light, heavy, unknown;
    light.sm_util = light.mem_bw_util = 0.1;
    heavy.sm_util = heavy.mem_bw_util = 0.9;
    for (JobProfile* p : {&light, &heavy}) p->known = {{"sm_util", true}, {"mem_bw_util", true}};
    // A job beside one busy a tenth of the time loses at most that tenth (and the switch).
    const double floor = 1 / (1 + 0.1 * 1.1);
    CHECK(prior_gpu_sd(heavy, light, params) == doctest::Approx(std::hypot((1 - floor) / 2, kMeasuredSpeedSd)));
    CHECK(prior_gpu_sd(light, heavy, params) == doctest::Approx(prior_gpu_sd(heavy, light, params)));
    CHECK(prior_gpu_sd(heavy, light, params) < 0.06);
    // Two busy jobs may run anywhere from half speed (time-sliced) to nearly full (overlapping).
    CHECK(prior_gpu_sd(heavy, heavy, params) == kPriorSpeedSd);
    // Defaulted utilisations bound nothing, nor does a pair whose footprints cannot co-run.
    CHECK(prior_gpu_sd(light, unknown, params) == kPriorSpeedSd);
    light.gpu_mem_gb = heavy.gpu_mem_gb = 20;
    light.known["gpu_mem_gb"] = heavy.known["gpu_mem_gb"] = true;
    CHECK(prior_gpu_sd(heavy, light, params) == kPriorSpeedSd);
}

TEST_CASE("a measured pair is returned as measured") {
    const JobProfile a = job("a", "resnet", 32, 1, 5), b = job("b", "lm", 20, 10, 40);
    ReferenceTable t("v100");
    const int ia = t.add_job("a", solo_features(a, "v100")), ib = t.add_job("b", solo_features(b, "v100"));
    t.set_speed(ia, ib, 0.37);
    CHECK(predict_gpu_speed(t, q(a, t), q(b, t), false, GpuShareParams{}) == doctest::Approx(0.37).epsilon(1e-6));
    CHECK(t.measured_pairs() == 1);
}

TEST_CASE("an unseen job type is predicted from similar ones, not from the prior") {
    // Family "resnet": speed beside x falls with batch size; the unseen batch 48 lies between.
    ReferenceTable t("v100");
    const JobProfile x = job("x", "lm", 20, 10, 40);
    const JobProfile r16 = job("r16", "resnet", 16, 4, 20), r32 = job("r32", "resnet", 32, 2.4, 12),
                     r64 = job("r64", "resnet", 64, 1.3, 6.5), other = job("o", "gan", 1, 0.5, 2);
    const int ix = t.add_job("x", solo_features(x, "v100"));
    for (const auto* p : {&r16, &r32, &r64, &other}) {
        const int i = t.add_job(p->name, solo_features(*p, "v100"));
        const double s = p == &other ? 0.1 : 0.9 - 0.1 * std::log2(p->batch_size / 16);
        t.set_speed(i, ix, s);
    }
    const JobProfile unseen = job("r48", "resnet", 48, 1.8, 9);
    const double s = predict_gpu_speed(t, q(unseen, t), q(x, t), false, GpuShareParams{});
    CHECK(s > 0.7);
    CHECK(s < 0.85);
    CHECK(std::abs(s - (0.9 - 0.1 * std::log2(3.0))) < 0.05);
}

TEST_CASE("an empty table falls back to the prior, clamped to [min_speed, 1]") {
    const ReferenceTable t("v100");
    JobProfile a, b;
    const GpuShareParams params;
    const double s = predict_gpu_speed(t, q(a, t), q(b, t), false, params);
    CHECK(s == doctest::Approx(prior_gpu_speed(a, b, params)));
    CHECK(s <= 1.0);
    CHECK(s >= params.min_speed);
}

TEST_CASE("self-pairs of an unseen type come from other self-pairs") {
    ReferenceTable t("v100");
    const JobProfile a = job("a", "lm", 10, 20, 80), b = job("b", "lm", 40, 10, 50);
    const int ia = t.add_job("a", solo_features(a, "v100")), ib = t.add_job("b", solo_features(b, "v100"));
    t.set_speed(ia, ia, 0.7);
    t.set_speed(ib, ib, 0.6);
    t.set_speed(ia, ib, 0.2);  // cross pairs must not leak into the self-pair estimate
    const JobProfile c = job("c", "lm", 20, 15, 65);
    const double s = predict_gpu_speed(t, q(c, t), q(c, t), true, GpuShareParams{});
    CHECK(s > 0.55);
    CHECK(s < 0.75);
}
