#include <doctest/doctest.h>

#include "config/config.hpp"

using namespace coloc::daemon;

namespace {

const char* kGood = R"(listen: [ "ipc:///tmp/x.sock", "tcp://127.0.0.1:7345" ]
database: /tmp/x.db
munge_socket: /tmp/m.sock
admins: [root, "0"]
partitions:
  bind: { mode: bind }
  narrow: { mode: narrow }
node_types:
  quad:
    gpus: 4
    slots_per_gpu: 2
    nvlink_islands: [[0, 1], [2, 3]]
    pcie_switches: [[0, 1], [2, 3]]
    nics: [[0, 1, 2, 3]]
  big:
    gpus: 8
nodes:
  - { names: "n[1-4]", type: quad, link: leaf1 }
  - { names: "g[01-02]", type: big, link: leaf2, mode: observe }
)";

std::string error_of(const std::string& text) {
    try {
        parse_config(text, "colocd.yaml");
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

TEST_CASE("a good colocd.yaml gives the topology, modes and settings") {
    Config c = parse_config(kGood, "colocd.yaml");
    CHECK(c.listen.size() == 2);
    CHECK(c.database == "/tmp/x.db");
    CHECK(c.partition_modes.at("bind") == coloc::proto::GpuMode::Bind);
    CHECK(c.partition_modes.at("narrow") == coloc::proto::GpuMode::Narrow);
    REQUIRE(c.topology.nodes().size() == 6);
    CHECK(c.topology.nodes()[0].name == "n1");
    CHECK(c.topology.nodes()[5].name == "g02");
    CHECK(c.topology.total_gpus() == 32);
    const auto& quad = c.topology.type_of(0);
    CHECK(quad.slots_per_gpu == 2);
    CHECK(quad.island == std::vector<int>{0, 0, 1, 1});
    CHECK(quad.nic == std::vector<int>{0, 0, 0, 0});
    CHECK(c.topology.type_of(4).slots_per_gpu == 1);
    CHECK(c.topology.type_of(4).island == std::vector<int>(8, -1));
    CHECK(c.node_modes.at("g01") == coloc::proto::GpuMode::Observe);
    CHECK(c.topology.nodes_on_link(0).size() == 4);
}

TEST_CASE("bad files are refused with the file, the line and the key") {
    std::string base = kGood;
    auto replace = [&](const std::string& from, const std::string& to) {
        std::string t = base;
        auto at = t.find(from);
        REQUIRE(at != std::string::npos);
        return t.replace(at, from.size(), to);
    };
    CHECK(error_of(replace("slots_per_gpu: 2", "slots_per_gpu: two")) ==
          "colocd.yaml:11: key 'node_types.quad.slots_per_gpu': 'two' is not an integer");
    CHECK(error_of(replace("slots_per_gpu: 2", "slots_per_gpu: 0")) ==
          "colocd.yaml:11: key 'node_types.quad.slots_per_gpu': 0 is outside 1..64");
    CHECK(error_of(replace("database:", "datbase:")).find("colocd.yaml:2: key 'datbase': unknown key") == 0);
    CHECK(error_of(replace("type: quad, link: leaf1", "type: octo")) ==
          "colocd.yaml:18: key 'nodes[0].type': unknown node type 'octo'");
    CHECK(error_of(replace("mode: bind", "mode: bound")) ==
          "colocd.yaml:6: key 'partitions.bind.mode': 'bound' is not one of bind, narrow, observe");
    CHECK(error_of(replace("[[0, 1], [2, 3]]\n    pcie", "[[0, 1], [1, 3]]\n    pcie")) ==
          "colocd.yaml:12: key 'node_types.quad.nvlink_islands': GPU 1 is in two groups");
    CHECK(error_of(replace("[[0, 1], [2, 3]]\n    pcie", "[[0, 9]]\n    pcie")) ==
          "colocd.yaml:12: key 'node_types.quad.nvlink_islands': 9 is outside 0..3");
    CHECK(error_of(replace("\"ipc:///tmp/x.sock\"", "\"http://x\"")).find("key 'listen': 'http://x' is not") !=
          std::string::npos);
    CHECK(error_of(replace("names: \"g[01-02]\"", "names: \"n[3-5]\"")).find("node 'n3' is declared twice") !=
          std::string::npos);
    CHECK(error_of("listen: [unclosed\n").rfind("colocd.yaml:", 0) == 0);
    CHECK(error_of("") == "colocd.yaml: the file is empty");
    CHECK(error_of("database: /x\nslurm_layout: false\n") ==
          "colocd.yaml:1: key 'nodes': missing: list the nodes colocd places on, or let it read them from Slurm");
}

TEST_CASE("a file that cannot be read names its path") {
    try {
        load_config("/nonexistent/colocd.yaml");
        FAIL("no error");
    } catch (const ConfigError& e) {
        CHECK(std::string(e.what()) == "/nonexistent/colocd.yaml: cannot open: No such file or directory");
    }
}
