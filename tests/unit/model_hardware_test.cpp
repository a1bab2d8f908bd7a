// The same-GPU term per kind of GPU hardware: each node type's GPU type picks its measured pairs
// and learned parameters, its memory decides whether two footprints fit, and a GPU type with no
// data says what it falls back to.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "model/coloc_model.hpp"
#include "model/hardware.hpp"
#include "place/cluster_state.hpp"
#include "place/coloc_policy.hpp"

using namespace coloc;
using namespace coloc::model;

namespace {

// Two jobs measured on v100 and k80 with different speeds; "big" has a 28 GB footprint.
ProfileCatalogue measured_on_two_types() {
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
    cat.add_pair({"a", "b", "k80", 0.3});
    cat.add_pair({"b", "a", "k80", 0.9});
    JobProfile big;
    big.name = "big";
    big.gpu_mem_gb = 28;
    big.sm_util = 0.9;
    big.mem_bw_util = 0.6;
    big.known = {{"gpu_mem_gb", true}, {"sm_util", true}, {"mem_bw_util", true}};
    cat.intern(big);
    return cat;
}

double pair_speed(const ColocModel& m, const std::string& job, const std::string& other, int hardware) {
    const Neighbour n{m.catalogue().find(other), Sharing::Gpu, std::nullopt, 1, static_cast<std::uint16_t>(hardware)};
    return speed(m.slowdown(*m.catalogue().find(job), std::span(&n, 1)));
}

}  // namespace

TEST_CASE("hardware: each node type's GPU type uses that type's measured pairs") {
    ColocModel m(measured_on_two_types());
    m.set_hardware({{"v100", 32}, {"k80", 12}});
    CHECK(pair_speed(m, "a", "b", 0) == doctest::Approx(0.8));
    CHECK(pair_speed(m, "a", "b", 1) == doctest::Approx(0.3));
    CHECK(pair_speed(m, "b", "a", 1) == doctest::Approx(0.9));
    // An index beyond the list is the first kind.
    CHECK(pair_speed(m, "a", "b", 7) == doctest::Approx(0.8));
}

TEST_CASE("hardware: the node's GPU memory decides whether two footprints fit") {
    ColocModel m(measured_on_two_types());
    m.set_hardware({{"v100", 32}, {"v100", 80}});  // the same pairs, only the memory differs
    const double small = pair_speed(m, "big", "big", 0);
    const double large = pair_speed(m, "big", "big", 1);
    // 56 GB in 32 GB: the prior says they cannot co-run; in 80 GB they time-slice.
    CHECK(large > 2 * small);
    // Jobs whose footprints fit in both are predicted alike on both.
    CHECK(pair_speed(m, "a", "b", 0) == doctest::Approx(pair_speed(m, "a", "b", 1)));
}

TEST_CASE("hardware: the shipped catalogue's bert-large-4gpu pair fits on 80 GB, not on 32 GB") {
    ProfileCatalogue cat;
    JobProfile bert;
    bert.name = "bert-large-4gpu";
    bert.gpus = 4;
    bert.sm_util = 0.9;
    bert.mem_bw_util = 0.6;
    bert.gpu_mem_gb = 28;
    bert.known = {{"gpu_mem_gb", true}, {"sm_util", true}, {"mem_bw_util", true}, {"gpus", true}};
    cat.intern(bert);
    ColocModel m(cat);
    m.set_hardware({{"v100", 32}, {"a100", 80}});
    CHECK(pair_speed(m, "bert-large-4gpu", "bert-large-4gpu", 1) >
          3 * pair_speed(m, "bert-large-4gpu", "bert-large-4gpu", 0));
}

TEST_CASE("hardware: parameters learned per GPU type apply to that type's nodes only") {
    ColocModel m(measured_on_two_types());
    GpuShareParams k80 = m.params().gpu;
    k80.min_speed = 0.5;  // a floor no default prediction of this pair reaches on k80
    m.set_hardware({{"v100", 32}, {"k80", 12}}, {{"k80", k80}});
    CHECK(pair_speed(m, "a", "b", 1) == doctest::Approx(0.5));
    CHECK(pair_speed(m, "a", "b", 0) == doctest::Approx(0.8));
}

TEST_CASE("hardware: learned_gpu_params reads colocctl fit's JSON and names the type of a bad one") {
    ColocModel fitted(measured_on_two_types());
    ColocParams p = fitted.params();
    p.gpu.family_penalty = 7;
    fitted.set_params(p);
    const LearnedGpuParams got = learned_gpu_params({{"v100", fitted.params_json().dump()}});
    CHECK(got.at("v100").family_penalty == 7);
    nlohmann::json bad = fitted.params_json();
    bad["gpu"]["bandwidth"] = {0, 0, 0, 0, 0, 0, 0};
    CHECK_THROWS_WITH_AS(learned_gpu_params({{"a100", bad.dump()}}), doctest::Contains("GPU type a100"),
                         std::invalid_argument);
}

TEST_CASE("hardware: a GPU type without measured pairs says what it falls back to") {
    ColocModel m(measured_on_two_types());
    CHECK(m.gpu_data_note("v100").empty());
    const std::string note = m.gpu_data_note("a100");
    CHECK(note.find("'a100'") != std::string::npos);
    CHECK(note.find("measured on v100, k80 predict") != std::string::npos);
    const std::vector<std::string> notes = configure_hardware(m, {{"v100", 32}, {"a100", 80}, {"a100", 40}});
    REQUIRE(notes.size() == 1);  // once per GPU type
    CHECK(notes[0] == note);
    // No pairs at all: the prior.
    ColocModel bare;
    CHECK(bare.gpu_data_note("v100").find("utilisation prior only") != std::string::npos);
}

TEST_CASE("hardware: the engine hands each node's GPU hardware to the model") {
    place::Topology topo;
    place::NodeType small;
    small.name = "v100x2";
    small.gpus = 2;
    small.slots_per_gpu = 2;
    small.gpu = {"v100", 32};
    place::NodeType large = small;
    large.name = "a100x2";
    large.gpu = {"a100", 80};
    topo.add_node("s1", topo.add_type(small), "");
    topo.add_node("l1", topo.add_type(large), "");
    CHECK(place::gpu_hardware(topo) == std::vector<GpuHardware>{{"v100", 32}, {"a100", 80}});

    ColocModel m(measured_on_two_types());
    configure_hardware(m, place::gpu_hardware(topo));
    place::ClusterState state(topo);
    const JobProfile* big = m.catalogue().find("big");
    // One "big" job fills each GPU of both nodes: a second one must share a GPU.
    for (int node = 0; node < 2; ++node)
        for (int g = 0; g < 2; ++g) {
            place::RunningJob j;
            j.id = static_cast<place::JobId>(1 + node * 2 + g);
            j.profile = big;
            j.where = {{node, {g}}};
            REQUIRE(state.add(j));
        }
    std::vector<Neighbour> on_small, on_large;
    state.neighbours_at(std::vector<place::Placement>{{0, {0}}}, false, 99, on_small);
    state.neighbours_at(std::vector<place::Placement>{{1, {0}}}, false, 99, on_large);
    REQUIRE(!on_small.empty());
    REQUIRE(!on_large.empty());
    CHECK(on_small[0].hardware == 0);
    CHECK(on_large[0].hardware == 1);

    place::ColocPolicy policy(m);
    place::JobRequest req;
    req.id = 99;
    req.profile = big;
    req.gpus_per_node = 1;
    const place::Decision d = policy.place(state, req, 1);
    REQUIRE(d.placed);
    CHECK(d.chosen.where.front().node == 1);  // it fits only beside the 80 GB GPUs' jobs
}
