// The replay's plot series and files: shared GPUs over time, the CDFs, and the gnuplot script
// (coloc drawn last, titles naming what was replayed).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "place/policy_factory.hpp"
#include "replay/plots.hpp"
#include "replay/simulator.hpp"
#include "test_env.hpp"

using namespace coloc;
using namespace coloc::replay;

namespace {

struct NoCost final : model::InterferenceModel {
    double slowdown(const model::JobProfile&, std::span<const model::Neighbour>) const override { return 1; }
    std::string name() const override { return "none"; }
};

ReplayJob job(double submit, int gpus, double work, const model::JobProfile* p) {
    ReplayJob j;
    j.submit = submit;
    j.work = work;
    j.limit = work;
    j.gpus_per_node = gpus;
    j.nodes = 1;
    j.profile = p;
    return j;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

TEST_CASE("busy timeline: slots in use and shared GPUs, by hand") {
    // Two GPUs with 2 slots each. J0 takes both GPUs 0..10; J1 (1 GPU) joins one of them at 2
    // and leaves at 6; J2 (1 GPU) joins at 4 and leaves at 8.
    auto topo = place::uniform_topology(1, 2, 2);
    model::JobProfile p;
    std::vector<ReplayJob> jobs = {job(0, 2, 10, &p), job(2, 1, 4, &p), job(4, 1, 4, &p)};
    NoCost truth;
    auto pack = place::make_policy("pack", nullptr);
    PolicyRun r = simulate(topo, *pack, place::Capacity::Open, truth, jobs);
    auto at = [&](double t) {
        BusyPoint last;
        for (const BusyPoint& b : r.busy)
            if (b.t <= t) last = b;
        return last;
    };
    CHECK(at(1).busy_gpus == 2);
    CHECK(at(1).used_slots == 2);
    CHECK(at(1).shared_gpus == 0);
    CHECK(at(3).used_slots == 3);
    CHECK(at(3).shared_gpus == 1);
    CHECK(at(5).used_slots == 4);
    CHECK(at(5).shared_gpus == 2);
    CHECK(at(7).shared_gpus == 1);
    CHECK(at(9).shared_gpus == 0);
    CHECK(at(11).busy_gpus == 0);
    CHECK(at(11).shared_gpus == 0);
}

TEST_CASE("plots: the data files, coloc drawn last, titles naming trace, cluster, truth and load") {
    auto topo = place::uniform_topology(1, 2, 2);
    model::JobProfile p;
    Workload w;
    w.jobs = {job(0, 2, 10, &p), job(2, 1, 4, &p)};
    NoCost truth;
    ReplayResult result;
    for (const char* name : {"coloc", "exclusive", "pack"}) {
        auto policy = place::make_policy(name, &truth);
        result.runs.push_back(simulate(topo, *policy, capacity_of(name), truth, w.jobs));
        result.runs.back().policy = name;
    }
    ReplayContext c;
    c.trace_source = "/some/where/trace.csv";
    c.trace_format = "sacct";
    c.cluster = "1 nodes x 2 GPUs, 2 slot(s) per GPU";
    c.total_gpus = 2;
    c.total_slots = 4;
    c.truth = "measured \"pairs\"";
    c.load = 1.5;
    const std::string dir = test::scratch("plots");
    std::filesystem::create_directories(dir);
    PlotFiles files = write_plots(dir, w, result, c, false);
    CHECK(files.problem.empty());
    for (const char* f : {"jct_cdf.dat", "wait_cdf.dat", "slowdown_cdf.dat", "busy_gpus.dat", "plots.gp"})
        CHECK(std::filesystem::exists(dir + "/" + f));

    // Exclusive's jobs: no slowdown; J1 waits for J0 (8 s), the CDF ends at 1.
    const std::string slow = slurp(dir + "/slowdown_cdf.dat");
    CHECK(slow.find("# exclusive: slowdown") != std::string::npos);
    const std::string busy = slurp(dir + "/busy_gpus.dat");
    CHECK(busy.find("GPUs shared by two jobs or more") != std::string::npos);

    const std::string gp = slurp(dir + "/plots.gp");
    for (const char* plot : {"jct_cdf.dat", "wait_cdf.dat", "slowdown_cdf.dat", "busy_gpus.dat"}) {
        // In each plot command coloc (block 0) comes after the others.
        const std::size_t first = gp.find(std::string("\"") + plot + "\" index");
        REQUIRE(first != std::string::npos);
        const std::size_t coloc = gp.find(std::string("\"") + plot + "\" index 0 ", first);
        const std::size_t pack = gp.find(std::string("\"") + plot + "\" index 2 ", first);
        CHECK(pack < coloc);
    }
    CHECK(gp.find("trace.csv (sacct) at load x1.5 on 1 nodes x 2 GPUs") != std::string::npos);
    CHECK(gp.find("/some/where") == std::string::npos);
    CHECK(gp.find("truth: measured \\\"pairs\\\"") != std::string::npos);
    CHECK(gp.find("slowdown_hist") == std::string::npos);
    std::filesystem::remove_all(dir);
}
