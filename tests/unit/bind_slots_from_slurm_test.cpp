// colocd reads a bind job's slots from Slurm when the plugin leaves them to it (slots_gres):
// once per job, bounded, and a job without slots here gets nothing placed.
#include <doctest/doctest.h>

#include <atomic>

#include "daemon/log.hpp"
#include "daemon/service/service.hpp"
#include "slurm/job_slots.hpp"
#include "tests/unit/test_env.hpp"

using namespace coloc;
using namespace coloc::daemon;
using proto::json;
using slurm::JobGres;
using slurm::JobGresLookup;
using slurm::load_job_gpus;

namespace {

const bool quiet = (set_log_level(LogLevel::Error), true);

Config bind_config(const std::string& db) {
    Config c = parse_config(R"(listen: [ "ipc:///tmp/unused.sock" ]
partitions:
  bind: { mode: bind }
node_types:
  quad: { gpus: 4, slots_per_gpu: 2 }
nodes:
  - { names: "n[1-3]", type: quad, link: leaf1 }
)",
                            "test.yaml");
    c.database = db;
    c.munge_socket = test::munge_socket();
    return c;
}

json place_bind(Service& s, std::int64_t job, const std::string& node, std::vector<std::string> nodes) {
    proto::PlaceRequest r;
    r.job_id = job;
    r.job_uid = 1000;
    r.node = node;
    r.partition = "bind";
    r.slots_gres = "gpuslot";
    r.job_nodes = std::move(nodes);
    return json::parse(s.handle(proto::seal_request(r.to_json(), test::munge_socket())));
}

JobGresLookup::Query slurm_says(JobGres gres, std::atomic<int>* asked) {
    return [gres, asked](std::int64_t id) {
        ++*asked;
        JobGres g = gres;
        g.job_id = id;
        return g;
    };
}

}  // namespace

TEST_CASE("job GRES: the count on a node from its detail, else from tres_per_node; what is unreadable, named") {
    slurm::JobGres g{7, "n[1-2]", {"gpuslot(CNT:2)", "gpu:1(IDX:0),gpuslot(CNT:3)"}, "gres:gpuslot:2"};
    CHECK(slurm::gres_count_on(g, "n1", "gpuslot") == 2);
    CHECK(slurm::gres_count_on(g, "n2", "gpuslot") == 3);
    CHECK(slurm::gres_count_on(g, "n9", "gpuslot") == 2);  // not in the detail: what it asked per node
    CHECK(slurm::gres_count_on({7, "n1", {}, ""}, "n1", "gpuslot") == 0);
    CHECK_THROWS_WITH(slurm::gres_count_on({7, "n1", {"gpuslot(CNT:"}, ""}, "n1", "gpuslot"),
                      doctest::Contains("job 7: no readable gpuslot count in Slurm's job record"));
}

TEST_CASE("bind slots from Slurm: asked once per job, its other nodes find the answer kept") {
    std::atomic<int> asked{0};
    Service s(bind_config(test::scratch("bind-slots.db")), load_job_gpus,
              slurm_says({0, "n[1-2]", {"gpuslot(CNT:2)", "gpuslot(CNT:2)"}, ""}, &asked));
    const json first = place_bind(s, 11, "n1", {"n1", "n2"});
    REQUIRE(first["ok"] == true);
    CHECK(first["mode"] == "bind");
    CHECK(first["gpus"].size() == 2);
    const json second = place_bind(s, 11, "n2", {"n1", "n2"});
    REQUIRE(second["ok"] == true);
    CHECK(second["gpus"].size() == 2);
    CHECK(asked == 1);
}

TEST_CASE("bind slots from Slurm: none here places nothing; no answer is an error the plugin falls back on") {
    std::atomic<int> asked{0};
    Service s(bind_config(test::scratch("bind-slots-none.db")), load_job_gpus, slurm_says({0, "n1", {""}, ""}, &asked));
    const json none = place_bind(s, 12, "n1", {"n1"});
    REQUIRE(none["ok"] == true);
    CHECK(none["decision"] == 0);
    CHECK(none["slots"] == 0);
    CHECK(none["gpus"].empty());
    CHECK(s.cluster().find(12) == nullptr);

    Service failing(bind_config(test::scratch("bind-slots-fail.db")), load_job_gpus,
                    [](std::int64_t) -> JobGres { throw std::runtime_error("job 13: slurm_load_job: timeout"); });
    const json err = place_bind(failing, 13, "n1", {"n1"});
    CHECK(err["ok"] == false);
    CHECK(err["error"]["code"] == "unavailable");
    CHECK(err["error"]["message"].get<std::string>().find("slurm_load_job: timeout") != std::string::npos);
}
