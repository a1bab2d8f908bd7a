// Slurm as the source of the layout: its files read with their lines, slurmctld's nodes merged
// with colocd.yaml, and the site check naming every disagreement between the copies.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <fstream>

#include "config/config.hpp"
#include "config/site_check.hpp"
#include "config/slurm_layout.hpp"
#include "slurm/conf_files.hpp"
#include "tests/unit/test_env.hpp"

using namespace coloc;
using namespace coloc::daemon;

namespace {

const char* kSlurmConf = R"(ClusterName=alpha
PlugStackConfig=DIR/plugstack.conf
GresTypes=gpu,gpuslot
NodeName=n[1-2] CPUs=8 Gres=gpu:4,gpuslot:8 \
   State=UNKNOWN
NodeName=big1 Gres=gpu:a100:8(S:0-1),gpuslot:16
PartitionName=bind Nodes=n[1-2] Default=YES
PartitionName=all Nodes=ALL
)";

const char* kGresConf = R"(AutoDetect=off
NodeName=n[1-2] Name=gpu File=/dev/nvidia[0-3]
NodeName=n[1-2] Name=gpuslot Count=8
NodeName=big1 Name=gpu Type=a100 File=/dev/nvidia0 Links=-1,2,0,0,0,0,0,0
NodeName=big1 Name=gpu Type=a100 File=/dev/nvidia1 Links=2,-1,0,0,0,0,0,0
NodeName=big1 Name=gpu Type=a100 File=/dev/nvidia2 Links=0,0,-1,2,0,0,0,0
NodeName=big1 Name=gpu Type=a100 File=/dev/nvidia3 Links=0,0,2,-1,0,0,0,0
NodeName=big1 Name=gpu Type=a100 File=/dev/nvidia[4-7]
NodeName=big1 Name=gpuslot Count=16
)";

const char* kYaml = R"(cluster: alpha
listen: [ "ipc:///tmp/unused.sock" ]
partitions:
  bind: { mode: bind }
node_types:
  quad:
    gpus: 4
    slots_per_gpu: 2
    nvlink_islands: [[0, 1], [2, 3]]
nodes:
  - { names: "n[1-2]", type: quad, link: leaf1 }
)";

struct Site {
    std::string dir;
    Site(const std::string& slurm_conf, const std::string& gres, const std::string& plugstack, const std::string& yaml)
        : dir(test::scratch("site")) {
        mkdir(dir.c_str(), 0755);
        write("slurm.conf", slurm_conf);
        write("gres.conf", gres);
        write("plugstack.conf", plugstack);
        write("colocd.yaml", yaml);
    }
    void write(const std::string& name, std::string text) const {
        for (auto at = text.find("DIR"); at != std::string::npos; at = text.find("DIR")) text.replace(at, 3, dir);
        std::ofstream(dir + "/" + name) << text;
    }
    CheckReport check() const { return check_site(dir + "/colocd.yaml", dir + "/slurm.conf"); }
};

const std::string kPlugstack = "optional /usr/lib/spank_coloc.so endpoint=ipc:///x gpus=4 slots_per_gpu=2\n";

std::string all_of(const CheckReport& r) {
    std::string s;
    for (const auto& d : r.disagreements) s += d + "\n";
    return s;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("slurm files: key=value lines keep their line; continuations join; GRES counts read") {
    const auto lines = slurm::parse_conf(kSlurmConf, "slurm.conf");
    const slurm::SlurmConf conf = slurm::parse_slurm_conf(lines, "/etc/slurm/slurm.conf");
    CHECK(conf.cluster_name == "alpha");
    REQUIRE(conf.nodes.size() == 3);
    CHECK(conf.nodes[0].where == "slurm.conf:4");
    CHECK(conf.nodes[0].gres == "gpu:4,gpuslot:8");
    CHECK(conf.nodes[2].where == "slurm.conf:6");
    REQUIRE(conf.partitions.size() == 2);
    CHECK(conf.partitions[0].is_default);
    CHECK(conf.partitions[1].nodes.size() == 3);  // Nodes=ALL
    CHECK(slurm::configured_gres_count("gpu:a100:8(S:0-1),gpuslot:16", "gpu") == 8);
    CHECK(slurm::configured_gres_count("gpu:a100:8(S:0-1),gpuslot:16", "gpuslot") == 16);
    CHECK(slurm::configured_gres_count("gpu:2,gpu:v100:2", "gpu") == 4);
    CHECK(slurm::configured_gres_count("gpuslot", "gpuslot") == 1);
    CHECK(slurm::configured_gres_count("mps:100", "gpu") == 0);
    CHECK_THROWS_AS(slurm::configured_gres_count("gpu:x", "gpu"), slurm::ConfError);
}

TEST_CASE("gres.conf: GPUs, slots and Links= per node; links make NVLink islands") {
    const auto gres = slurm::parse_gres_conf(slurm::parse_conf(kGresConf, "gres.conf"), {"n1", "n2", "big1"});
    CHECK(gres.at("n1").gpus == 4);
    CHECK(gres.at("n1").slots == 8);
    CHECK(gres.at("n1").links.empty());
    // Four GPUs give Links=, four do not: no links for big1.
    CHECK(gres.at("big1").gpus == 8);
    CHECK(gres.at("big1").links.empty());
    CHECK(slurm::islands_from_links({{-1, 2, 0, 0}, {2, -1, 0, 0}, {0, 0, -1, 1}, {0, 0, 1, -1}}) ==
          std::vector<int>{0, 0, 1, 1});
    CHECK(slurm::islands_from_links({{-1, 0}, {0, -1}}) == std::vector<int>{0, 1});
    const auto leaf = slurm::parse_topology_conf(slurm::parse_conf(
        "SwitchName=s1 Nodes=n[1-2]\nSwitchName=s2 Nodes=big1\nSwitchName=top Switches=s[1-2]\n", "t"));
    CHECK(leaf.at("n1") == "s1");
    CHECK(leaf.at("big1") == "s2");
    const auto plugin = slurm::parse_plugstack("# x\nrequired other.so\n" + kPlugstack, "plugstack.conf");
    REQUIRE(plugin);
    CHECK(plugin->where == "plugstack.conf:3");
    CHECK(plugin->args.at("slots_per_gpu") == "2");
}

TEST_CASE("layout: Slurm's nodes join those colocd.yaml names; a yaml node type fills in topology") {
    Config yaml = parse_config(R"(listen: [ "ipc:///tmp/unused.sock" ]
node_types:
  quad: { gpus: 4, slots_per_gpu: 2, nvlink_islands: [[0, 1], [2, 3]] }
  odd: { gpus: 2 }
nodes:
  - { names: "n1", type: odd, link: mine }
  - { names: "gone1", type: quad }
)",
                               "y.yaml");
    CHECK_FALSE(yaml.slurm_layout);
    slurm::SlurmLayout slurm;
    slurm.nodes = {{"n1", "gpu:4,gpuslot:8", 4, 8}, {"n2", "gpu:4,gpuslot:8", 4, 8},
                   {"n3", "gpu:2", 2, 0},           {"cpu1", "", 0, 0},
                   {"s1", "gpuslot:4", 0, 4},       {"x1", "gpu:4,gpuslot:6", 4, 6}};
    slurm.partitions = {{"bind", {"n1", "n2"}}};
    yaml.partition_modes["nope"] = proto::GpuMode::Bind;
    LayoutFiles files;
    files.leaf = {{"n2", "leaf7"}, {"n1", "leaf7"}};
    files.gres["n3"].gpus = 2;
    files.gres["n3"].links = {{-1, 0}, {0, -1}};
    const MergedLayout m = merge_layout(yaml, slurm, files);
    const place::Topology& t = m.topology;
    // colocd.yaml wins for the nodes it names.
    CHECK(t.type_of(t.node_index("n1")).name == "odd");
    CHECK(t.link_names()[static_cast<std::size_t>(t.nodes()[t.node_index("n1")].link)] == "mine");
    // n2: Slurm's GPUs and slots, the yaml type of that shape for its islands, topology.conf's leaf.
    const place::NodeType& n2 = t.type_of(t.node_index("n2"));
    CHECK(n2.name == "quad");
    CHECK(n2.island == std::vector<int>{0, 0, 1, 1});
    CHECK(t.link_names()[static_cast<std::size_t>(t.nodes()[t.node_index("n2")].link)] == "leaf7");
    // n3: no yaml type of its shape; gres.conf's links say its two GPUs share no island.
    const place::NodeType& n3 = t.type_of(t.node_index("n3"));
    CHECK(n3.gpus == 2);
    CHECK(n3.slots_per_gpu == 1);
    CHECK(n3.island == std::vector<int>{0, 1});
    CHECK(t.node_index("cpu1") < 0);
    CHECK(t.node_index("s1") < 0);
    CHECK(t.node_index("x1") < 0);
    std::string notes;
    for (const auto& n : m.notes) notes += n + "\n";
    CHECK(notes.find("gone1, which Slurm does not know") != std::string::npos);
    CHECK(notes.find("s1 has gpuslot:4 but no gres/gpu") != std::string::npos);
    CHECK(notes.find("x1: gpuslot:6 is not a multiple of gpu:4") != std::string::npos);
    CHECK(notes.find("partition nope") != std::string::npos);
}

TEST_CASE("colocd.yaml without nodes: read from Slurm") {
    const Config c =
        parse_config("listen: [ \"ipc:///tmp/unused.sock\" ]\npartitions: { bind: { mode: bind } }\n", "y");
    CHECK(c.slurm_layout);
    CHECK(c.topology.nodes().empty());
}

TEST_CASE("site check: agreeing copies pass") {
    const Site site(kSlurmConf, kGresConf, kPlugstack, kYaml);
    const CheckReport r = site.check();
    // big1 is not in colocd.yaml and has no gpuslot in a bind partition: only the plugstack line differs.
    CHECK(all_of(r) ==
          site.dir + "/plugstack.conf:1: gpus=4, but " + site.dir + "/slurm.conf:6 gives gpu:8 (nodes big1)\n");
}

TEST_CASE("site check: each planted disagreement is named with file and line") {
    const std::string small_conf = replaced(kSlurmConf, "NodeName=big1 Gres=gpu:a100:8(S:0-1),gpuslot:16\n", "");
    const std::string small_gres =
        "NodeName=n[1-2] Name=gpu File=/dev/nvidia[0-3]\nNodeName=n[1-2] Name=gpuslot Count=8\n";
    CHECK(Site(small_conf, small_gres, kPlugstack, kYaml).check().ok());

    const Site slots(small_conf, replaced(small_gres, "Count=8", "Count=6"), kPlugstack, kYaml);
    CHECK(all_of(slots.check()) == slots.dir + "/gres.conf:2: node n1 has 6 gpuslot, but " + slots.dir +
                                       "/slurm.conf:4 says Gres=gpu:4,gpuslot:8\n" + slots.dir +
                                       "/gres.conf:2: node n2 has 6 gpuslot, but " + slots.dir +
                                       "/slurm.conf:4 says Gres=gpu:4,gpuslot:8\n");

    const Site plug(small_conf, small_gres, replaced(kPlugstack, "slots_per_gpu=2", "slots_per_gpu=3"), kYaml);
    CHECK(all_of(plug.check()) == plug.dir + "/plugstack.conf:1: slots_per_gpu=3, but " + plug.dir +
                                      "/slurm.conf:4 gives gpuslot:8 over gpu:4 (nodes n1,n2)\n");

    const Site yaml(small_conf, small_gres, kPlugstack, replaced(kYaml, "slots_per_gpu: 2", "slots_per_gpu: 3"));
    const std::string y = all_of(yaml.check());
    CHECK(y.find(yaml.dir + "/colocd.yaml:6: node type quad (node n1) has 4 x slots_per_gpu: 3, but " + yaml.dir +
                 "/slurm.conf:4 says Gres=gpu:4,gpuslot:8") != std::string::npos);

    const Site named(small_conf, small_gres, kPlugstack,
                     replaced(replaced(kYaml, "cluster: alpha", "cluster: beta"), "bind: {", "gone: {"));
    const std::string n = all_of(named.check());
    CHECK(n.find(named.dir + "/colocd.yaml:1: cluster 'beta', but " + named.dir +
                 "/slurm.conf:1 says ClusterName=alpha") != std::string::npos);
    CHECK(n.find(named.dir + "/colocd.yaml:4: partition gone is not in " + named.dir + "/slurm.conf") !=
          std::string::npos);

    const Site other(small_conf, small_gres, replaced(kPlugstack, "gpus=4", "cluster=beta gpus=4"), kYaml);
    CHECK(all_of(other.check()) ==
          other.dir + "/plugstack.conf:1: cluster=beta, but " + other.dir + "/slurm.conf:1 says ClusterName=alpha\n");

    const Site broken(small_conf, small_gres, kPlugstack, "nodes: [\n");
    CHECK_FALSE(broken.check().ok());
}

TEST_CASE("site check: job_submit.lua beside slurm.conf maps colocd's bind partitions and reads its offers") {
    const std::string conf =
        replaced(kSlurmConf, "NodeName=big1 Gres=gpu:a100:8(S:0-1),gpuslot:16\n", "") + "JobSubmitPlugins=lua\n";
    const std::string gres = "NodeName=n[1-2] Name=gpu File=/dev/nvidia[0-3]\nNodeName=n[1-2] Name=gpuslot Count=8\n";
    // The shipped script, its partitions set as the install steps say: nothing differs.
    std::ifstream shipped("etc/job_submit.lua");
    REQUIRE(shipped);
    const std::string script((std::istreambuf_iterator<char>(shipped)), std::istreambuf_iterator<char>());
    const std::string ours = replaced(script, "{ \"shared\" }", "{ \"bind\" }");
    const Site good(conf, gres, kPlugstack, kYaml);
    good.write("job_submit.lua", ours);
    CHECK(good.check().ok());

    const Site left_out(conf, gres, kPlugstack, kYaml);
    left_out.write("job_submit.lua", script);
    const std::string l = all_of(left_out.check());
    CHECK(l.find(left_out.dir + "/job_submit.lua:") != std::string::npos);
    CHECK(l.find(": bind_partitions leaves out bind, which " + left_out.dir + "/colocd.yaml:4 puts in bind mode") !=
          std::string::npos);

    const Site elsewhere(conf, gres, kPlugstack, kYaml + std::string("admission: { offers_file: /srv/offers }\n"));
    elsewhere.write("job_submit.lua", ours);
    CHECK(all_of(elsewhere.check())
              .find("OFFERS_FILE \"/run/coloc/offers\", but " + elsewhere.dir +
                    "/colocd.yaml writes standing offers to /srv/offers") != std::string::npos);

    const Site old(conf, gres, kPlugstack, kYaml);
    old.write("job_submit.lua", replaced(ours, "local OFFERS_FILE", "local OLD"));
    const CheckReport r = old.check();
    CHECK(r.ok());
    bool noted = false;
    for (const auto& n : r.notes) noted = noted || n.find("has no OFFERS_FILE") != std::string::npos;
    CHECK(noted);
}
