// The strict reading of slurmctld's per-node GRES detail: what colocd trusts to place a narrow
// job on several nodes. Good strings as Slurm 22.05 writes them; each malformed one refused with
// its reason.
#include <doctest/doctest.h>

#include "slurm/gres_detail.hpp"

using namespace coloc::slurm;

TEST_CASE("gres detail: the forms Slurm writes") {
    NodeGres a = parse_node_gres("gpu:2(IDX:0-1)");
    CHECK(a.gpus == std::vector<int>{0, 1});
    CHECK(a.gpu_count == 2);
    CHECK(a.slot_count == 0);
    NodeGres b = parse_node_gres("gpu:a100:3(IDX:0,2-3),gpuslot(CNT:1)");
    CHECK(b.gpus == std::vector<int>{0, 2, 3});
    CHECK(b.slot_count == 1);
    CHECK(parse_node_gres("gpuslot(CNT:2)").slot_count == 2);
    CHECK(parse_node_gres("gpuslot:2").slot_count == 2);
    CHECK(parse_node_gres("gpu(IDX:3,1)").gpus == std::vector<int>{1, 3});
    // Two types on one node add up; other GRES are passed over, whatever they say.
    CHECK(parse_node_gres("gpu:a100:1(IDX:0),gpu:v100:1(IDX:2)").gpus == std::vector<int>{0, 2});
    CHECK(parse_node_gres("nic:1(whatever),gpu:1(IDX:3)").gpus == std::vector<int>{3});
    CHECK(parse_node_gres("").gpus.empty());
    CHECK(parse_node_gres("gpu:0").gpus.empty());
}

TEST_CASE("gres detail: each malformed string is refused with its reason") {
    const std::pair<const char*, const char*> cases[] = {
        {"gpu:2(IDX:0-1", "'(' not closed"},
        {"gpu:2IDX:0-1)", "')' without '(' at offset 12"},
        {"gpu:2((IDX:0))", "nested '(' at offset 6"},
        {"gpu:1(IDX:0),,gpuslot:1", "empty item at offset 13"},
        {"gpu:2(IDX:0-1)x", "text after ')' in 'gpu:2(IDX:0-1)x'"},
        {":2(IDX:0-1)", "item ':2(IDX:0-1)' has no GRES name"},
        {"gpu:2(IDX:N/A)", "Slurm names no GPU indexes (IDX:N/A)"},
        {"gpu:2(IDX:)", "empty IDX list"},
        {"gpu:2(IDX:0,)", "IDX list ends with ','"},
        {"gpu:2(IDX:0-x)", "'0-x' is not a GPU index or range (0 to 1023)"},
        {"gpu:1(IDX:-1)", "'-1' is not a GPU index or range (0 to 1023)"},
        {"gpu:1(IDX:5000)", "'5000' is not a GPU index or range (0 to 1023)"},
        {"gpu:2(IDX:3-1)", "range '3-1' runs backwards"},
        {"gpu:3(IDX:0-1,1)", "GPU 1 is listed twice"},
        {"gpu:1(IDX:0),gpu:1(IDX:0)", "GPU 0 is listed twice"},
        {"gpu:3(IDX:0-1)", "'gpu:3(IDX:0-1)' counts 3 GPUs but lists 2"},
        {"gpu:2x(IDX:0-1)", "count '2x' of 'gpu:2x(IDX:0-1)' is not a number"},
        {"gpu:2", "'gpu:2' names no GPU indexes (no IDX:...)"},
        {"gpu:2(0-1)", "'(0-1)' in 'gpu:2(0-1)' is neither IDX:... nor CNT:n"},
        {"gpuslot", "'gpuslot' gives no slot count"},
        {"gpuslot:2(CNT:3)", "'gpuslot:2(CNT:3)' gives two different counts"},
    };
    for (const auto& [text, why] : cases) {
        CAPTURE(text);
        CHECK_THROWS_WITH_AS(parse_node_gres(text), (std::string("gres detail '") + text + "': " + why).c_str(),
                             GresDetailError);
    }
}

TEST_CASE("gres detail: the count of one named GRES, as the plugin reads its bind slots") {
    CHECK(gres_count("gpuslot(CNT:3)", "gpuslot") == 3);
    CHECK(gres_count("gpuslot:2", "gpuslot") == 2);
    CHECK(gres_count("gpu:2(IDX:0-1),gpuslot(CNT:1)", "gpuslot") == 1);
    CHECK(gres_count("gpu:2(IDX:0-1),gpuslot(CNT:1)", "gpu") == 2);
    CHECK(gres_count("gpu(IDX:0,2-3),gpuslot(CNT:2)", "gpu") == 3);
    CHECK(gres_count("gpu(IDX:0,2-3),gpuslot(CNT:2)", "gpuslot") == 2);
    CHECK(gres_count("gpuslots(CNT:4)", "gpuslot") == 0);
    CHECK(gres_count("nic:1(whatever),slot(CNT:4)", "slot") == 4);  // any name, other GRES passed over
    CHECK(gres_count("", "gpuslot") == 0);
    CHECK_THROWS_WITH_AS(gres_count("gpuslot(CNT:x)", "gpuslot"),
                         "gres detail 'gpuslot(CNT:x)': '(CNT:x)' in 'gpuslot(CNT:x)' is neither IDX:... nor CNT:n",
                         GresDetailError);
    CHECK_THROWS_WITH_AS(gres_count("gpuslot:fast", "gpuslot"),
                         "gres detail 'gpuslot:fast': 'gpuslot:fast' gives no count", GresDetailError);
    CHECK_THROWS_AS(gres_count("gpuslot(CNT:1", "gpuslot"), GresDetailError);
}

TEST_CASE("gres detail: the count of one named GRES from tres_per_node") {
    CHECK(tres_per_node_count("gres:gpuslot:3", "gpuslot") == 3);
    CHECK(tres_per_node_count("gres/gpuslot:2", "gpuslot") == 2);
    CHECK(tres_per_node_count("gres:gpu:1,gres:gpuslot:fast:2", "gpuslot") == 2);
    CHECK(tres_per_node_count("gres:gpuslot", "gpuslot") == 1);
    CHECK(tres_per_node_count("gres:gpuslot:fast", "gpuslot") == 1);
    CHECK(tres_per_node_count("gres:gpu:4", "gpuslot") == 0);
    CHECK(tres_per_node_count("cpu=4", "gpuslot") == 0);
    CHECK(tres_per_node_count("", "gpuslot") == 0);
    CHECK_THROWS_WITH_AS(tres_per_node_count("gres:gpuslot:a:b", "gpuslot"),
                         "tres_per_node entry 'gpuslot:a:b' gives no count", GresDetailError);
}
