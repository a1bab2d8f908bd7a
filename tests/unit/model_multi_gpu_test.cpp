// A job on several GPUs runs at its slowest GPU's pace: the model's composition of neighbours.
#include <doctest/doctest.h>

#include <vector>

#include "model/coloc_model.hpp"

using namespace coloc::model;

namespace {

JobProfile profile(const std::string& name, double host_pressure = 0.1) {
    JobProfile p;
    p.name = name;
    p.host_pressure = host_pressure;
    p.comm_fraction = 0.2;
    p.comm_bytes = 1e8;
    p.known = {{"comm_fraction", true}};
    return p;
}

// r: a two-GPU job; h hurts it a lot on a GPU, l a little.
ColocModel model() {
    ProfileCatalogue cat;
    JobProfile r = profile("r", 0.4);
    r.gpus = 2;
    cat.intern(r);
    cat.intern(profile("h", 0.3));
    cat.intern(profile("l", 0.2));
    cat.add_pair({"r", "h", "v100", 0.4});  // delay 1.5
    cat.add_pair({"r", "l", "v100", 0.8});  // delay 0.25
    cat.add_pair({"h", "r", "v100", 0.5});
    cat.add_pair({"l", "r", "v100", 0.9});
    return ColocModel(std::move(cat));
}

Neighbour on(const ColocModel& m, const char* name, Sharing where, std::uint64_t gpus = 1) {
    return {m.catalogue().find(name), where, std::nullopt, gpus};
}

// The composition before jobs had GPUs of their own: every neighbour's share adds up.
double summed(const ColocModel& m, const JobProfile& job, const std::vector<Neighbour>& ns) {
    if (ns.empty()) return 1.0;
    double extra = 0;
    for (const Neighbour& n : ns) {
        const Contributions c = m.contributions(job, std::span(&n, 1));
        extra += c.gpu + c.topo + c.link + c.residual;
    }
    return std::max(1.0, 1.0 + extra);
}

}  // namespace

TEST_CASE("multi-GPU job: a heavy neighbour on each GPU costs one neighbour's delay, not two") {
    const ColocModel m = model();
    const JobProfile& r = *m.catalogue().find("r");
    const std::vector<Neighbour> one = {on(m, "h", Sharing::Gpu, 0b01)};
    const std::vector<Neighbour> apart = {on(m, "h", Sharing::Gpu, 0b01), on(m, "h", Sharing::Gpu, 0b10)};
    const std::vector<Neighbour> stacked = {on(m, "h", Sharing::Gpu, 0b01), on(m, "h", Sharing::Gpu, 0b01)};
    CHECK(m.slowdown(r, one) == doctest::Approx(2.5).epsilon(1e-6));
    CHECK(m.slowdown(r, apart) == doctest::Approx(m.slowdown(r, one)).epsilon(1e-12));
    // Two on the same GPU time-slice it three ways: their delays add.
    CHECK(m.slowdown(r, stacked) == doctest::Approx(4.0).epsilon(1e-6));
    // A neighbour on both of the job's GPUs slows each of them once.
    const std::vector<Neighbour> both = {on(m, "h", Sharing::Gpu, 0b11)};
    CHECK(m.slowdown(r, both) == doctest::Approx(m.slowdown(r, one)).epsilon(1e-12));
    // The pace is the slowest GPU's: h and l on one GPU outweigh h alone on the other.
    const std::vector<Neighbour> mixed = {on(m, "h", Sharing::Gpu, 0b01), on(m, "h", Sharing::Gpu, 0b10),
                                          on(m, "l", Sharing::Gpu, 0b10)};
    CHECK(m.slowdown(r, mixed) == doctest::Approx(1.0 + 1.5 + 0.25).epsilon(1e-6));
}

TEST_CASE("multi-GPU job: what it shares below the GPU still adds to the slowest GPU's delay") {
    const ColocModel m = model();
    const JobProfile& r = *m.catalogue().find("r");
    for (Sharing where : {Sharing::Island, Sharing::Switch, Sharing::Node, Sharing::Link}) {
        const std::string level = to_string(where);
        CAPTURE(level);
        const std::vector<Neighbour> below = {on(m, "l", where), on(m, "h", where)};
        std::vector<Neighbour> all = {on(m, "h", Sharing::Gpu, 0b01), on(m, "h", Sharing::Gpu, 0b10)};
        all.insert(all.end(), below.begin(), below.end());
        const double gpu_only = m.slowdown(r, std::vector<Neighbour>{on(m, "h", Sharing::Gpu, 0b01)});
        CHECK(m.slowdown(r, below) > 1.0);
        CHECK(m.slowdown(r, all) == doctest::Approx(gpu_only + (m.slowdown(r, below) - 1.0)).epsilon(1e-12));
    }
}

TEST_CASE("single-GPU predictions are the summed composition, unchanged") {
    ColocModel m = model();
    // Something learned, so that calibration and pair residuals take part.
    const JobProfile& h = *m.catalogue().find("h");
    const JobProfile& l = *m.catalogue().find("l");
    for (int i = 0; i < 20; ++i) {
        const std::vector<Neighbour> seen = {on(m, "r", Sharing::Gpu), on(m, "l", Sharing::Node)};
        m.observe(h, seen, 3.1);
        const std::vector<Neighbour> seen2 = {on(m, "h", Sharing::Island), on(m, "r", Sharing::Link)};
        m.observe(l, seen2, 1.3);
    }
    const std::vector<std::vector<Neighbour>> cases = {
        {on(m, "r", Sharing::Gpu)},
        {on(m, "r", Sharing::Gpu), on(m, "l", Sharing::Gpu)},
        {on(m, "r", Sharing::Gpu), on(m, "l", Sharing::Node), on(m, "h", Sharing::Island)},
        {on(m, "r", Sharing::Switch), on(m, "l", Sharing::Link), on(m, "r", Sharing::Link)},
        {on(m, "r", Sharing::Gpu), on(m, "r", Sharing::Gpu), on(m, "l", Sharing::Gpu), on(m, "h", Sharing::Node)},
    };
    for (const JobProfile* job : {&h, &l}) {
        for (const auto& ns : cases) {
            CAPTURE(job->name);
            CAPTURE(ns.size());
            CHECK(m.slowdown(*job, ns) == doctest::Approx(summed(m, *job, ns)).epsilon(1e-12));
        }
    }
    // Callers that say nothing about GPUs (every Gpu neighbour on GPU 0) get the sum for a
    // multi-GPU job too.
    const JobProfile& r = *m.catalogue().find("r");
    const std::vector<Neighbour> unsaid = {on(m, "h", Sharing::Gpu), on(m, "l", Sharing::Gpu),
                                           on(m, "h", Sharing::Node)};
    CHECK(m.slowdown(r, unsaid) == doctest::Approx(summed(m, r, unsaid)).epsilon(1e-12));
}

TEST_CASE("learning fits the slowest-GPU composition it predicts with") {
    ColocModel m = model();
    const JobProfile& r = *m.catalogue().find("r");
    // h on one GPU, l on the other, and a node neighbour: the job is measured at 3.0.
    const std::vector<Neighbour> seen = {on(m, "h", Sharing::Gpu, 0b01), on(m, "l", Sharing::Gpu, 0b10),
                                         on(m, "l", Sharing::Node)};
    const double l_alone_before = m.slowdown(r, std::vector<Neighbour>{on(m, "l", Sharing::Gpu, 0b10)});
    for (int i = 0; i < 200; ++i) m.observe(r, seen, 3.0);
    CHECK(m.slowdown(r, seen) == doctest::Approx(3.0).epsilon(0.02));
    // What explain shows is what placement uses (slowdown() has a one-pass path of its own).
    CHECK(m.contributions(r, seen).slowdown() == doctest::Approx(m.slowdown(r, seen)).epsilon(1e-12));
    const std::vector<Neighbour> spread = {on(m, "h", Sharing::Gpu, 0b10), on(m, "l", Sharing::Gpu, 0b01),
                                           on(m, "h", Sharing::Gpu, 0b01), on(m, "h", Sharing::Link)};
    CHECK(m.contributions(r, spread).slowdown() == doctest::Approx(m.slowdown(r, spread)).epsilon(1e-12));
    // l's GPU did not set the pace, so nothing was learned about l beside r on a GPU.
    CHECK(m.calibration().theta()[kGpuTerm] > 0);
    const double l_alone_after = m.slowdown(r, std::vector<Neighbour>{on(m, "l", Sharing::Gpu, 0b10)});
    CHECK(l_alone_after - 1.0 ==
          doctest::Approx((l_alone_before - 1.0) * m.calibration().theta()[kGpuTerm]).epsilon(1e-9));
}
