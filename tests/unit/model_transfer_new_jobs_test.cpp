// Transfer from other GPU types to jobs they never measured: as far as held-out families were
// predicted, with the prior's level corrected only where it was computed from the same kind of
// inputs, and similarity counting what only one job knows as a difference.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "model/coloc_model.hpp"

using namespace coloc::model;

namespace {
constexpr const char* kTypes[] = {"k80", "p100", "v100"};

JobProfile job(const std::string& name, const std::string& family, double batch) {
    JobProfile p;
    p.name = name;
    p.family = family;
    p.batch_size = batch;
    p.known = {{"family", true}, {"batch_size", true}};
    return p;
}

JobProfile measured(JobProfile p, double sm, double mem_bw) {
    p.sm_util = sm;
    p.mem_bw_util = mem_bw;
    p.known["sm_util"] = p.known["mem_bw_util"] = true;
    return p;
}

// Four families of two jobs each, batch sizes far apart family by family, measured on three GPU
// types that agree exactly; a pair's speed is the mean of its families' levels.
ProfileCatalogue families(const double (&level)[4]) {
    ProfileCatalogue cat;
    for (int f = 0; f < 4; ++f)
        for (int k = 0; k < 2; ++k)
            cat.intern(
                job("f" + std::to_string(f) + "j" + std::to_string(k), "f" + std::to_string(f), 16 << (4 * f + k)));
    for (const char* gpu : kTypes)
        for (int a = 0; a < 8; ++a)
            for (int b = 0; b < 8; ++b)
                cat.add_pair({cat.at(a + 1).name, cat.at(b + 1).name, gpu, 0.5 * (level[a / 2] + level[b / 2])});
    return cat;
}

Prediction on_new_type(const ColocModel& m, const std::string& a, const std::string& b) {
    return m.gpu_prediction(*m.catalogue().find(a), *m.catalogue().find(b));
}

ColocParams new_type() {
    ColocParams p;
    p.gpu_type = "h100";
    return p;
}
}  // namespace

TEST_CASE("a family no type measured follows the other types only as far as held-out families were predicted") {
    // Levels that alternate with batch size: the nearest family by batch says nothing of a new one.
    const double level[4] = {0.3, 0.9, 0.3, 0.9};
    ProfileCatalogue cat = families(level);
    cat.intern(job("new", "fresh", 16 << 4));  // the batch of f1j0, a job at level 0.9
    const ColocModel m(cat, new_type());
    // Jobs the other types measured carry over as they agree: exactly.
    CHECK(on_new_type(m, "f1j0", "f1j1").speed == doctest::Approx(0.9).epsilon(0.05));
    // A new family is not taken for its nearest neighbour by batch (0.9): held-out families
    // showed that guess carries nothing, so it stays near the level pairs have on the whole,
    // and says how unsure that is.
    const Prediction fresh = on_new_type(m, "new", "new");
    CHECK(std::abs(fresh.speed - 0.6) < 0.08);
    CHECK(fresh.uncertainty > 0.2);
    CHECK(fresh.uncertainty > 4 * on_new_type(m, "f1j0", "f1j1").uncertainty);
}

TEST_CASE("the prior's level learned from defaulted utilisations is not applied to measured ones") {
    // Every measured pair is slow, far below what the prior makes of default utilisations.
    const double level[4] = {0.45, 0.45, 0.45, 0.45};
    ProfileCatalogue cat = families(level);
    cat.intern(job("plain-a", "fresh", 64));
    cat.intern(job("plain-b", "fresh", 128));
    cat.intern(measured(job("light-a", "fresh", 64), 0.2, 0.1));
    cat.intern(measured(job("light-b", "fresh", 128), 0.2, 0.1));
    const ColocModel m(cat, new_type());
    // Like the jobs behind the correction (utilisations defaulted): corrected toward their level.
    CHECK(on_new_type(m, "plain-a", "plain-b").speed < 0.6);
    // Two jobs measured as light: the prior from their utilisations, the correction only as doubt.
    const JobProfile& a = *m.catalogue().find("light-a");
    const JobProfile& b = *m.catalogue().find("light-b");
    const double prior = prior_gpu_speed(a, b, m.params().gpu);
    const Prediction light = on_new_type(m, "light-a", "light-b");
    CHECK(light.speed == doctest::Approx(prior).epsilon(0.05));
    const JobProfile& plain = *m.catalogue().find("plain-a");
    CHECK(light.uncertainty >= prior_gpu_speed(plain, plain, m.params().gpu) - 0.45 - 0.05);
}

TEST_CASE("similarity counts a feature only one job knows as a difference") {
    ReferenceTable t("k80");
    for (int k = 0; k < 3; ++k) {
        const JobProfile r = job("r" + std::to_string(k), "resnet", 32 << k);
        t.add_job(r.name, solo_features(r, "k80"));
    }
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) t.set_speed(i, j, 0.5);
    const JobProfile plain = job("q", "resnet", 64);
    const JobProfile known = measured(plain, 0.5, 0.3);
    const GpuShareParams p;
    const auto weight = [&](const JobProfile& q) {
        const GpuQuery g{&q, solo_features(q, "k80"), -1};
        return kernel_gpu_estimate(t, g, g, false, p).weight;
    };
    // Two more features the references do not know: each one bandwidth apart, in both jobs.
    CHECK(weight(known) == doctest::Approx(weight(plain) * std::exp(-2.0)).epsilon(0.01));
}

TEST_CASE("a job with no pair on a type that has some is as unsure as that type's jobs differ") {
    // On v100 (the type asked about) each job suffers differently, by up to 0.15 either way: the
    // other types' level carries over, each job's own effect only for the jobs measured there.
    ProfileCatalogue cat;
    for (int k = 0; k < 6; ++k) cat.intern(job("j" + std::to_string(k), "f", 16 << k));
    cat.intern(job("extra", "f", 16 << 6));
    const auto own_effect = [](int k) { return 0.15 * (k % 3 - 1); };
    for (const char* gpu : {"k80", "p100"})
        for (int a = 1; a <= 7; ++a)
            for (int b = 1; b <= 7; ++b) cat.add_pair({cat.at(a).name, cat.at(b).name, gpu, 0.6});
    for (int a = 1; a <= 6; ++a)
        for (int b = 1; b <= 6; ++b) cat.add_pair({cat.at(a).name, cat.at(b).name, "v100", 0.6 + own_effect(a - 1)});
    ColocParams p;
    p.gpu_type = "v100";
    const ColocModel m(cat, p);
    const Prediction measured_job = m.gpu_prediction(*m.catalogue().find("j0"), *m.catalogue().find("j1"));
    const Prediction unmeasured_job = m.gpu_prediction(*m.catalogue().find("extra"), *m.catalogue().find("j1"));
    CHECK(measured_job.uncertainty < 0.05);
    // The jobs measured on v100 differ by 0.12 (root mean square) from the level; fitted, drawn
    // toward 0, somewhat less.
    CHECK(unmeasured_job.uncertainty > 0.06);
}
