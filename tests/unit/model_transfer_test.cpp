// The same-GPU term across GPU types, observed pairs, and the uncertainty of predictions.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "model/coloc_model.hpp"

using namespace coloc::model;

namespace {
JobProfile job(const std::string& name, const std::string& family, double batch, double sm) {
    JobProfile p;
    p.name = name;
    p.family = family;
    p.batch_size = batch;
    p.sm_util = sm;
    p.known = {{"family", true}, {"batch_size", true}, {"sm_util", true}};
    return p;
}

// Four jobs of one family measured in pairs on `gpu` with speed f(i, j); a stranger far away.
ProfileCatalogue catalogue(const std::string& gpu, double (*f)(int, int)) {
    ProfileCatalogue cat;
    for (int i = 0; i < 4; ++i) cat.intern(job("r" + std::to_string(i), "resnet", 16 << i, 0.4 + 0.1 * i));
    JobProfile far = job("stranger", "transformer", 4096, 0.95);
    far.known["gpu_mem_gb"] = false;
    cat.intern(far);
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) cat.add_pair({"r" + std::to_string(i), "r" + std::to_string(j), gpu, f(i, j)});
    return cat;
}

double speeds(int i, int j) { return 0.8 - 0.05 * (i + j); }

Prediction beside(const ColocModel& m, const std::string& a, const std::string& b) {
    const Neighbour n{m.catalogue().find(b), Sharing::Gpu, std::nullopt};
    return m.predict(*m.catalogue().find(a), std::span(&n, 1));
}

ColocParams on(const std::string& gpu) {
    ColocParams p;
    p.gpu_type = gpu;
    return p;
}
}  // namespace

TEST_CASE("far from every measured pair the prediction is the prior's, with a wide uncertainty") {
    const ColocModel m(catalogue("v100", speeds), on("v100"));
    const JobProfile& s = *m.catalogue().find("stranger");
    const Prediction far = beside(m, "stranger", "stranger");
    CHECK(far.speed == doctest::Approx(prior_gpu_speed(s, s, m.params().gpu)).epsilon(0.02));
    const Prediction measured = beside(m, "r1", "r2");
    CHECK(measured.speed == doctest::Approx(speeds(1, 2)));
    CHECK(measured.uncertainty < 0.05);
    CHECK(far.uncertainty > 0.2);
    CHECK(far.uncertainty > 4 * measured.uncertainty);
}

TEST_CASE("a GPU type with no pair of its own starts from the other types' pairs") {
    const ColocModel m(catalogue("p100", speeds), on("v100"));
    CHECK(beside(m, "r0", "r3").speed == doctest::Approx(speeds(0, 3)));
    // Another type's measurement is less sure than the own type's.
    const ColocModel own(catalogue("v100", speeds), on("v100"));
    CHECK(beside(m, "r0", "r3").uncertainty >= beside(own, "r0", "r3").uncertainty);
}

TEST_CASE("observed pairs move their neighbours' predictions, online as a batch fit on the same pairs") {
    // Measured elsewhere at speeds(); on this type every pair runs 0.2 slower.
    ColocModel online(catalogue("p100", speeds), on("v100"));
    ProfileCatalogue batch_cat = catalogue("p100", speeds);
    for (auto [i, j] : {std::pair{0, 1}, {1, 0}, {2, 3}, {3, 2}, {1, 2}}) {
        const std::string a = "r" + std::to_string(i), b = "r" + std::to_string(j);
        const Neighbour n{online.catalogue().find(b), Sharing::Gpu, std::nullopt};
        online.learner()->observe(*online.catalogue().find(a), std::span(&n, 1), 1 / (speeds(i, j) - 0.2));
        batch_cat.add_pair({a, b, "v100", speeds(i, j) - 0.2});
    }
    const ColocModel batch(batch_cat, on("v100"));
    CHECK(beside(online, "r0", "r1").speed == doctest::Approx(speeds(0, 1) - 0.2));
    // An unobserved pair of similar jobs moves most of the way.
    const double moved = speeds(0, 2) - beside(online, "r0", "r2").speed;
    CHECK(moved > 0.1);
    CHECK(moved < 0.25);
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
            const std::string a = "r" + std::to_string(i), b = "r" + std::to_string(j);
            CHECK(beside(online, a, b).speed == doctest::Approx(beside(batch, a, b).speed));
        }
    // What was observed survives a restart.
    ColocModel restarted(catalogue("p100", speeds), on("v100"));
    restarted.load_params_json(online.params_json());
    CHECK(beside(restarted, "r0", "r2").speed == doctest::Approx(beside(online, "r0", "r2").speed));
    CHECK(restarted.observed_pairs().all().size() == 5);
}

TEST_CASE("a bad observed pair in stored parameters is refused, naming it") {
    ColocModel m(catalogue("v100", speeds), on("v100"));
    const nlohmann::json bad = {
        {"observed_pairs", {{{"gpu_type", "v100"}, {"job", "r0"}, {"neighbour", "r1"}, {"speed", 7.0}}}}};
    CHECK_THROWS_WITH_AS(m.load_params_json(bad), doctest::Contains("observed pair"), std::invalid_argument);
    CHECK(m.observed_pairs().empty());
}

namespace {
double rising(int i, int j) { return 0.5 + 0.05 * (i + j); }

// The pairs of catalogue() measured on p100 with `p100` and on k80 with `k80`.
ColocModel two_types(double (*p100)(int, int), double (*k80)(int, int)) {
    ProfileCatalogue cat = catalogue("p100", p100);
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) cat.add_pair({"r" + std::to_string(i), "r" + std::to_string(j), "k80", k80(i, j)});
    return ColocModel(cat, on("v100"));
}
}  // namespace

TEST_CASE("other GPU types' pairs carry over to a new type as far as they agree among themselves") {
    const ColocModel agree = two_types(speeds, speeds);
    const ColocModel disagree = two_types(speeds, rising);
    // Types that predict each other well are followed.
    CHECK(beside(agree, "r0", "r0").speed == doctest::Approx(speeds(0, 0)).epsilon(0.05));
    // Types that contradict each other say how unsure their transfer is.
    CHECK(beside(disagree, "r0", "r0").uncertainty > 2 * beside(agree, "r0", "r0").uncertainty);
}

TEST_CASE("with no pair measured anywhere a busy job beside a light one is predicted surely, two busy ones not") {
    ProfileCatalogue cat;
    cat.intern(job("hog", "hog", 32, 0.9));
    cat.intern(job("feed", "feed", 32, 0.1));
    for (const char* name : {"hog", "feed"}) {  // both utilisations read, as `colocctl probe` reads them
        JobProfile p = *cat.find(name);
        p.mem_bw_util = p.sm_util;
        p.known["mem_bw_util"] = true;
        cat.intern(p);
    }
    const ColocModel m(cat, on("v100"));
    const Prediction mixed = beside(m, "hog", "feed"), busy = beside(m, "hog", "hog");
    CHECK(mixed.speed == doctest::Approx(prior_gpu_speed(*cat.find("hog"), *cat.find("feed"), m.params().gpu)));
    CHECK(mixed.uncertainty < 0.06);
    CHECK(busy.uncertainty == doctest::Approx(kPriorSpeedSd));
}
