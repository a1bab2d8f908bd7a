// Online learning and parameter persistence.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "model/coloc_model.hpp"

using namespace coloc::model;

namespace {
ProfileCatalogue catalogue() {
    ProfileCatalogue cat;
    for (const char* n : {"a", "b", "c", "d"}) {
        JobProfile p;
        p.name = n;
        p.sm_util = 0.3 + 0.15 * (n[0] - 'a');
        p.known["sm_util"] = true;
        cat.intern(p);
    }
    return cat;
}
}  // namespace

TEST_CASE("the prediction for a recurring pair converges to what was observed") {
    ColocModel model(catalogue());
    const JobProfile& a = *model.catalogue().find("a");
    const JobProfile& b = *model.catalogue().find("b");
    const Neighbour n{&b, Sharing::Gpu, std::nullopt};
    const double observed = 2.3;
    const double before = model.slowdown(a, std::span(&n, 1));
    CHECK(std::abs(before - observed) > 0.5);
    for (int i = 0; i < 200; ++i) model.observe(a, std::span(&n, 1), observed);
    CHECK(model.slowdown(a, std::span(&n, 1)) == doctest::Approx(observed).epsilon(0.01));
    // A same-GPU pair is kept as measured: its neighbours in feature space move with it, less
    // sure of it than of the pair itself.
    const Neighbour nc{&model.catalogue().at(model.catalogue().find("c")->id), Sharing::Gpu, std::nullopt};
    const double other_before = ColocModel(catalogue()).slowdown(a, std::span(&nc, 1));
    const double other_after = model.slowdown(a, std::span(&nc, 1));
    CHECK(other_after > other_before);
    CHECK(other_after <= observed + 1e-9);
    CHECK(model.predict(a, std::span(&nc, 1)).uncertainty > model.predict(a, std::span(&n, 1)).uncertainty);
}

TEST_CASE("noisy observations of a recurring pair converge to their mean") {
    ColocModel model(catalogue());
    const JobProfile& c = *model.catalogue().find("c");
    const JobProfile& d = *model.catalogue().find("d");
    const Neighbour n{&d, Sharing::Switch, std::nullopt};
    for (int i = 0; i < 400; ++i) model.observe(c, std::span(&n, 1), 1.2 + (i % 2 ? 0.05 : -0.05));
    CHECK(model.slowdown(c, std::span(&n, 1)) == doctest::Approx(1.2).epsilon(0.03));
}

TEST_CASE("calibration (RLS) recovers the terms' scales from varied observations") {
    Calibration cal(0.05, 0.04);
    for (int i = 0; i < 500; ++i) {
        TermVector x;
        x << 0.2 + 0.1 * (i % 7), 0.3 * (i % 3), 0.5 * (i % 5 == 0);
        cal.update(x, 1.5 * x[0] + 0.5 * x[1] + 2.0 * x[2]);
    }
    CHECK(cal.theta()[kGpuTerm] == doctest::Approx(1.5).epsilon(0.02));
    CHECK(cal.theta()[kTopoTerm] == doctest::Approx(0.5).epsilon(0.05));
    CHECK(cal.theta()[kLinkTerm] == doctest::Approx(2.0).epsilon(0.05));
    CHECK(cal.updates() == 500);
}

TEST_CASE("the model's calibration moves towards a term that is consistently off") {
    ColocModel model(catalogue());
    const ColocModel fresh(catalogue());
    const auto& cat = model.catalogue();
    for (int round = 0; round < 50; ++round)
        for (const char* x : {"a", "b", "c", "d"})
            for (const char* y : {"a", "b", "c", "d"}) {
                // Two neighbours on the GPU: a single one would be kept as a measured pair.
                const Neighbour n[2] = {{cat.find(y), Sharing::Gpu, std::nullopt},
                                        {cat.find(x), Sharing::Gpu, std::nullopt}};
                const double base = fresh.slowdown(*cat.find(x), n);
                model.observe(*cat.find(x), n, 1 + 1.5 * (base - 1));
            }
    CHECK(model.calibration().theta()[kGpuTerm] > 1.05);
    CHECK(model.calibration().theta()[kTopoTerm] == 1.0);  // no evidence about it
}

TEST_CASE("params JSON round trip reproduces every prediction") {
    ColocModel model(catalogue());
    const auto& cat = model.catalogue();
    const Neighbour n{cat.find("b"), Sharing::Gpu, std::nullopt};
    const Neighbour m{cat.find("c"), Sharing::Node, std::nullopt};
    for (int i = 0; i < 20; ++i) {
        model.observe(*cat.find("a"), std::span(&n, 1), 1.9);
        model.observe(*cat.find("d"), std::span(&m, 1), 1.15);
    }
    const nlohmann::json saved = nlohmann::json::parse(model.params_json().dump());
    ColocModel loaded(catalogue());
    loaded.load_params_json(saved);
    for (const char* x : {"a", "b", "c", "d"})
        for (const Neighbour* nb : {&n, &m}) {
            const Neighbour local{loaded.catalogue().find(nb->profile->name), nb->where, std::nullopt};
            CHECK(loaded.slowdown(*loaded.catalogue().find(x), std::span(&local, 1)) ==
                  doctest::Approx(model.slowdown(*cat.find(x), std::span(nb, 1))));
        }
    CHECK(loaded.params_json() == model.params_json());
}

TEST_CASE("bad params are rejected and leave the model as it was") {
    ColocModel model(catalogue());
    const nlohmann::json before = model.params_json();
    CHECK_THROWS(model.load_params_json(nlohmann::json::parse(R"({"gpu": {"ridge": "high"}})")));
    CHECK_THROWS(model.load_params_json(nlohmann::json::parse(R"({"model": "baseline"})")));
    CHECK_THROWS(model.load_params_json(nlohmann::json::parse(R"({"calibration": {"theta": [1, 2]}})")));
    CHECK_THROWS(model.load_params_json(nlohmann::json::parse(R"([1, 2])")));
    CHECK(model.params_json() == before);
}

TEST_CASE("residuals of profiles no longer in the catalogue are dropped on load") {
    ColocModel model(catalogue());
    const auto& cat = model.catalogue();
    const Neighbour n{cat.find("b"), Sharing::Gpu, std::nullopt};
    model.observe(*cat.find("a"), std::span(&n, 1), 3.0);
    ProfileCatalogue smaller;
    JobProfile only;
    only.name = "a";
    smaller.intern(only);
    ColocModel other(smaller);
    other.load_params_json(model.params_json());
    CHECK(other.params_json()["residuals"].empty());
}

TEST_CASE("pair residuals read the same through the dense table of small ids and the map of large ones") {
    PairResiduals r(0.05);
    CHECK(r.get(3, 4, kGpuTerm) == 0);
    r.add(1, 2, kGpuTerm, 0.4);  // first sighting: all of its error
    r.set(200, 1, kLinkTerm, {0.25, 3});
    CHECK(r.get(1, 2, kGpuTerm) == doctest::Approx(0.4));
    CHECK(r.count(1, 2, kGpuTerm) == 1);
    CHECK(r.get(2, 1, kGpuTerm) == 0);  // a pair is ordered: the neighbour's view is its own
    CHECK(r.get(1, 2, kTopoTerm) == 0);
    // A larger small id grows the dense table: what it held before is still read.
    r.add(90, 5, kTopoTerm, 0.2);
    r.add(1, 2, kGpuTerm, -0.4);  // second sighting: half of its error
    CHECK(r.get(1, 2, kGpuTerm) == doctest::Approx(0.2));
    CHECK(r.count(1, 2, kGpuTerm) == 2);
    CHECK(r.get(90, 5, kTopoTerm) == doctest::Approx(0.2));
    CHECK(r.get(200, 1, kLinkTerm) == doctest::Approx(0.25));
    CHECK(r.count(200, 1, kLinkTerm) == 3);
    CHECK(r.get(-1, 2, kGpuTerm) == 0);
    CHECK(r.all().size() == 3);
    r.clear();
    CHECK(r.get(1, 2, kGpuTerm) == 0);
    CHECK(r.get(200, 1, kLinkTerm) == 0);
    r.add(1, 2, kGpuTerm, 0.1);  // usable again after a clear
    CHECK(r.get(1, 2, kGpuTerm) == doctest::Approx(0.1));
}
