// Multi-node jobs as one placement through colocd's request handlers (real munge, SQLite).
#include <doctest/doctest.h>

#include "daemon/log.hpp"
#include "daemon/service/service.hpp"
#include "proto/envelope.hpp"
#include "proto/messages.hpp"
#include "tests/unit/test_env.hpp"

using namespace coloc;
using namespace coloc::daemon;
using proto::json;

namespace {

const bool quiet = (set_log_level(LogLevel::Error), true);

// n1-n2 on leaf1, n3-n5 on leaf2; bind mode; the shipped profile catalogue.
Config multinode_config(const std::string& db) {
    Config c = parse_config(R"(listen: [ "ipc:///tmp/unused.sock" ]
partitions:
  bind: { mode: bind }
node_types:
  quad: { gpus: 4, slots_per_gpu: 2, nvlink_islands: [[0, 1], [2, 3]] }
nodes:
  - { names: "n[1-2]", type: quad, link: leaf1 }
  - { names: "n[3-5]", type: quad, link: leaf2 }
)",
                            "test.yaml");
    c.database = db;
    c.munge_socket = test::munge_socket();
    return c;
}

json call(Service& s, json body) {
    return json::parse(s.handle(proto::seal_request(std::move(body), test::munge_socket())));
}

json place_on(Service& s, std::int64_t job, const std::string& node, std::vector<std::string> nodes, int slots = 2) {
    proto::PlaceRequest r;
    r.job_id = job;
    r.job_uid = 1000;
    r.node = node;
    r.partition = "bind";
    r.slots = slots;
    r.job_nodes = std::move(nodes);
    return call(s, r.to_json());
}

std::vector<int> gpus(const json& reply) { return reply["gpus"].get<std::vector<int>>(); }

}  // namespace

TEST_CASE("multi-node: the first node to ask places the whole job; the others get the same decision") {
    Service s(multinode_config(test::scratch("multinode.db")));
    const json second = place_on(s, 41, "n2", {"n1", "n2"});  // n2's plugin happens to ask first
    REQUIRE(second["ok"] == true);
    CHECK(second["reused"] == false);
    CHECK(gpus(second).size() == 2);
    const place::RunningJob* job = s.cluster().find(41);
    REQUIRE(job != nullptr);
    REQUIRE(job->where.size() == 2);  // both nodes, at once
    CHECK(job->where[0].node == 0);
    CHECK(job->where[1].node == 1);
    CHECK(job->where[1].gpus == gpus(second));
    const json first = place_on(s, 41, "n1", {"n1", "n2"});
    REQUIRE(first["ok"] == true);
    CHECK(first["reused"] == true);  // answered from the whole-job decision
    CHECK(gpus(first) == job->where[0].gpus);
    CHECK(s.cluster().find(41)->where.size() == 2);  // nothing placed twice
    CHECK(s.cluster().free_slots(0) == 6);
    CHECK(s.cluster().free_slots(1) == 6);
    // Explain shows the one candidate covering both nodes, on each node's decision.
    const json explain = call(s, {{"op", "explain"}, {"job_id", 41}});
    REQUIRE(explain["explain"].size() == 2);
    for (const json& d : explain["explain"]) CHECK(d["candidates"][0]["where"].size() == 2);
}

TEST_CASE("multi-node: the link term counts the job's traffic on every link it crosses") {
    Service s(multinode_config(test::scratch("multinode-link.db")));
    REQUIRE(place_on(s, 1, "n1", {"n1", "n2"})["ok"] == true);  // on leaf1
    REQUIRE(place_on(s, 2, "n3", {"n3", "n4"})["ok"] == true);  // on leaf2
    // Job 3 crosses both links: it meets job 1 on n2 and over leaf1, and job 2 only over leaf2.
    const json third = place_on(s, 3, "n2", {"n2", "n5"});
    REQUIRE(third["ok"] == true);
    const json d = call(s, {{"op", "explain"}, {"job_id", 3}})["explain"][0];
    std::map<std::int64_t, std::string> shares;
    for (const json& n : d["candidates"][0]["neighbours"]) shares[n["job_id"].get<std::int64_t>()] = n["shares"];
    REQUIRE(shares.size() == 2);
    CHECK(shares[2] == "link");
    CHECK(shares[1] != "link");  // it shares n2 itself, which is tighter
    CHECK(third["predicted_slowdown"].get<double>() > 1.0);
    // A job on leaf2's nodes alone does not meet job 1 at all.
    const json fourth = place_on(s, 4, "n4", {"n3", "n4"}, 1);
    const json d4 = call(s, {{"op", "explain"}, {"job_id", 4}})["explain"][0];
    for (const json& n : d4["candidates"][0]["neighbours"]) CHECK(n["job_id"] != 1);
}

TEST_CASE("multi-node: a job that cannot have its GPUs on every node is refused as a whole, changing nothing") {
    Service s(multinode_config(test::scratch("multinode-full.db")));
    REQUIRE(place_on(s, 1, "n1", {"n1"}, 4)["ok"] == true);
    REQUIRE(place_on(s, 9, "n1", {"n1"}, 4)["ok"] == true);  // n1 full: two slots on each GPU
    const json r = place_on(s, 2, "n2", {"n1", "n2"}, 1);
    CHECK(r["ok"] == false);
    CHECK(r["error"]["code"] == "no_capacity");
    CHECK(s.cluster().find(2) == nullptr);
    CHECK(s.cluster().free_slots(1) == 8);
}
