// ColocModel: the terms together, edge cases, defaults, the cache.
#include <doctest/doctest.h>

#include "model/coloc_model.hpp"
#include "model/defaults.hpp"
#include "model/factory.hpp"

using namespace coloc::model;

namespace {
ProfileCatalogue two_jobs() {
    ProfileCatalogue cat;
    JobProfile a;
    a.name = "a";
    a.family = "resnet";
    a.batch_size = 32;
    a.solo_throughput = {{"k80", 2}, {"v100", 10}};
    a.known = {{"family", true}, {"batch_size", true}, {"solo_throughput", true}};
    JobProfile b = a;
    b.name = "b";
    b.family = "lm";
    b.solo_throughput = {{"k80", 20}, {"v100", 50}};
    cat.intern(a);
    cat.intern(b);
    cat.add_pair({"a", "b", "v100", 0.8});
    cat.add_pair({"b", "a", "v100", 0.4});
    cat.add_pair({"a", "a", "v100", 0.5});
    cat.add_pair({"b", "b", "v100", 0.55});
    return cat;
}
}  // namespace

TEST_CASE("a job alone runs at solo speed") {
    const ColocModel model(two_jobs());
    CHECK(model.slowdown(*model.catalogue().find("a"), {}) == 1.0);
    CHECK(speed(model.slowdown(model.catalogue().default_profile(), {})) == 1.0);
}

TEST_CASE("measured same-GPU pairs are reproduced; neighbours on one GPU add their delays") {
    const ColocModel model(two_jobs());
    const JobProfile& a = *model.catalogue().find("a");
    const JobProfile& b = *model.catalogue().find("b");
    const Neighbour nb{&b, Sharing::Gpu, std::nullopt};
    CHECK(speed(model.slowdown(a, std::span(&nb, 1))) == doctest::Approx(0.8).epsilon(1e-6));
    const Neighbour na{&a, Sharing::Gpu, std::nullopt};
    CHECK(speed(model.slowdown(b, std::span(&na, 1))) == doctest::Approx(0.4).epsilon(1e-6));
    const Neighbour both[2] = {nb, na};
    CHECK(model.slowdown(a, both) == doctest::Approx(1 + (1 / 0.8 - 1) + (1 / 0.5 - 1)).epsilon(1e-6));
}

TEST_CASE("identical jobs slow each other identically") {
    const ColocModel model;
    JobProfile j;
    j.name = "same";
    const Neighbour n{&j, Sharing::Gpu, std::nullopt};
    const double s = model.slowdown(j, std::span(&n, 1));
    CHECK(s > 1.0);
    JobProfile k = j;
    const Neighbour m{&k, Sharing::Gpu, std::nullopt};
    CHECK(model.slowdown(k, std::span(&m, 1)) == doctest::Approx(s));
}

TEST_CASE("zero communication: a shared link costs nothing") {
    const ColocModel model;
    JobProfile a, b;
    a.nodes = b.nodes = 2;
    a.comm_fraction = b.comm_fraction = 0;
    a.known["comm_fraction"] = b.known["comm_fraction"] = true;
    const Neighbour n{&b, Sharing::Link, std::nullopt};
    CHECK(model.slowdown(a, std::span(&n, 1)) == 1.0);
}

TEST_CASE("in-step jobs on a link pay their overlap; a known interleaving avoids it") {
    const ColocModel model;
    JobProfile a;
    a.nodes = 2;
    a.iter_time_s = 1.0;
    a.comm_fraction = 0.3;
    a.known["comm_fraction"] = true;
    const Neighbour in_step{&a, Sharing::Link, std::nullopt};
    CHECK(model.slowdown(a, std::span(&in_step, 1)) == doctest::Approx(1.3));
    const Neighbour apart{&a, Sharing::Link, 0.3};
    CHECK(model.slowdown(a, std::span(&apart, 1)) == doctest::Approx(1.0));
}

TEST_CASE("missing features get the documented defaults, not zeros") {
    JobProfile p;  // nothing known
    CHECK(p.sm_util == 0.6);
    CHECK(p.mem_bw_util == 0.4);
    CHECK(p.gpu_mem_gb == 8);
    CHECK(p.host_pressure == 0.1);
    CHECK(p.iter_time_s == 0.25);
    CHECK(effective_comm_fraction(p) == 0.0);  // a single-GPU job does not communicate
    p.nodes = 4;                               // a distributed job that does not say how much
    CHECK(effective_comm_fraction(p) == kDefaultDistributedCommFraction);
    CHECK(link_burst(p).burst_s == doctest::Approx(0.2 * 0.25));
    const ColocModel model;
    const Neighbour n{&p, Sharing::Link, std::nullopt};
    CHECK(model.slowdown(p, std::span(&n, 1)) > 1.0);
    const Neighbour g{&p, Sharing::Gpu, std::nullopt};
    CHECK(model.slowdown(p, std::span(&g, 1)) > 1.1);  // the prior from default utilisations
}

TEST_CASE("tighter topology costs at least as much") {
    const ColocModel model;
    JobProfile a;
    a.gpus = 4;
    a.host_pressure = 0.5;
    double last = 0;
    for (Sharing w : {Sharing::Node, Sharing::Switch, Sharing::Island}) {
        const Neighbour n{&a, w, std::nullopt};
        const double s = model.slowdown(a, std::span(&n, 1));
        CHECK(s >= last);
        CHECK(s > 1.0);
        last = s;
    }
}

TEST_CASE("a neighbour without a profile counts as the default profile") {
    const ColocModel model;
    JobProfile def;
    const Neighbour unknown{nullptr, Sharing::Gpu, std::nullopt};
    const Neighbour known{&def, Sharing::Gpu, std::nullopt};
    CHECK(model.slowdown(def, std::span(&unknown, 1)) == doctest::Approx(model.slowdown(def, std::span(&known, 1))));
}

TEST_CASE("cached and uncached paths agree; foreign ids are not trusted") {
    const ColocModel model(two_jobs());
    const JobProfile& a = *model.catalogue().find("a");
    JobProfile b = *model.catalogue().find("b");
    const double cached = model.gpu_speed(a, b);
    b.id = -1;
    CHECK(model.gpu_speed(a, b) == doctest::Approx(cached));
    JobProfile impostor = b;
    impostor.id = a.id;  // an id from another catalogue
    CHECK(model.gpu_speed(a, impostor) == doctest::Approx(cached));
}

TEST_CASE("the factory knows both models") {
    CHECK(make_model("baseline")->name() == "baseline");
    CHECK(make_model("coloc")->name() == "coloc");
    CHECK(make_model("coloc", two_jobs())->name() == "coloc");
    CHECK_THROWS_AS(make_model("oracle"), std::invalid_argument);
}
