// Narrow jobs on several nodes as one placement: what slurmctld tells of each node's GPUs (read
// strictly, asked with a deadline), and colocd's handlers placing the whole job within them or,
// when slurmctld cannot tell, node by node as before (real munge, SQLite).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <thread>

#include "daemon/log.hpp"
#include "daemon/service/service.hpp"
#include "proto/envelope.hpp"
#include "proto/messages.hpp"
#include "slurm/job_gpus.hpp"
#include "tests/unit/test_env.hpp"

using namespace coloc;
using namespace coloc::daemon;
using proto::json;
using slurm::JobGpus;
using slurm::JobGpusLookup;
using namespace std::chrono_literals;

namespace {

const bool quiet = (set_log_level(LogLevel::Error), true);

Config narrow_config(const std::string& db) {
    Config c = parse_config(R"(listen: [ "ipc:///tmp/unused.sock" ]
partitions:
  narrow: { mode: narrow }
node_types:
  quad: { gpus: 4, slots_per_gpu: 2, nvlink_islands: [[0, 1], [2, 3]] }
nodes:
  - { names: "n[1-3]", type: quad, link: leaf1 }
)",
                            "test.yaml");
    c.database = db;
    c.munge_socket = test::munge_socket();
    return c;
}

json call(Service& s, json body) {
    return json::parse(s.handle(proto::seal_request(std::move(body), test::munge_socket())));
}

json place_narrow(Service& s, std::int64_t job, const std::string& node, std::vector<int> slurm_gpus,
                  std::vector<std::string> nodes = {"n1", "n2"}) {
    proto::PlaceRequest r;
    r.job_id = job;
    r.job_uid = 1000;
    r.node = node;
    r.partition = "narrow";
    r.slurm_gpus = std::move(slurm_gpus);
    r.job_nodes = std::move(nodes);
    return call(s, r.to_json());
}

std::vector<int> gpus(const json& reply) { return reply["gpus"].get<std::vector<int>>(); }

// slurmctld as the tests want it: n1 holds GPUs 0-1 of the job, n2 GPUs 2-3.
JobGpusLookup::Query slurm_says(std::vector<std::pair<std::string, std::vector<int>>> nodes,
                                std::atomic<int>* asked = nullptr) {
    return [nodes, asked](std::int64_t id) {
        if (asked) ++*asked;
        return JobGpus{id, nodes};
    };
}

bool subset(const std::vector<int>& a, const std::vector<int>& of) {
    for (int g : a)
        if (std::find(of.begin(), of.end(), g) == of.end()) return false;
    return true;
}

}  // namespace

TEST_CASE("job GPUs: node list and gres details, in order; what is wrong with them, named") {
    JobGpus j = slurm::job_gpus_from(7, "n[1-2]", {"gpu:2(IDX:0-1)", "gpu:2(IDX:2-3),gpuslot(CNT:1)"});
    REQUIRE(j.nodes.size() == 2);
    CHECK(j.nodes[0] == std::pair<std::string, std::vector<int>>{"n1", {0, 1}});
    CHECK(j.nodes[1] == std::pair<std::string, std::vector<int>>{"n2", {2, 3}});
    CHECK_THROWS_WITH(slurm::job_gpus_from(7, "n[1-2]", {"gpu:2(IDX:0-1)"}),
                      "job 7: slurmctld gave 1 gres details for 2 nodes (n[1-2])");
    CHECK_THROWS_WITH(slurm::job_gpus_from(7, "n[1-2", {"gpu:2(IDX:0-1)"}), "job 7: node list 'n[1-2' does not expand");
    CHECK_THROWS_WITH(slurm::job_gpus_from(7, "", {}), "job 7: node list '' does not expand");
    CHECK_THROWS_WITH(slurm::job_gpus_from(7, "n[1-2]", {"gpu:2(IDX:0-1)", "gpu:2(IDX:N/A)"}),
                      "job 7: n2: gres detail 'gpu:2(IDX:N/A)': Slurm names no GPU indexes (IDX:N/A)");
    CHECK_THROWS_WITH(slurm::job_gpus_from(7, "n[1-2]", {"gpu:2(IDX:0-1)", "gpuslot(CNT:2)"}),
                      "job 7: n2: Slurm gave no GPU there (gres detail 'gpuslot(CNT:2)')");
}

TEST_CASE("job GPUs lookup: waits no longer than told, and starts no second query while one hangs") {
    std::atomic<bool> release{false};
    std::atomic<int> asked{0};
    {
        JobGpusLookup lookup([&](std::int64_t id) {
            ++asked;
            while (!release) std::this_thread::sleep_for(1ms);
            return JobGpus{id, {{"n1", {0}}}};
        });
        const auto t0 = std::chrono::steady_clock::now();
        JobGpusLookup::Answer a = lookup.ask(5, 50ms);
        const auto waited = std::chrono::steady_clock::now() - t0;
        CHECK_FALSE(a.value);
        CHECK(a.error == "slurmctld did not answer within 50 ms");
        CHECK(waited >= 50ms);
        CHECK(waited < 1s);
        JobGpusLookup::Answer b = lookup.ask(6, 50ms);  // the first query still hangs
        CHECK_FALSE(b.value);
        CHECK(b.error == "slurmctld has not answered an earlier lookup yet");
        CHECK(asked == 1);
        release = true;
        // Once it came back (late, dropped), the next ask queries again and gets its answer.
        JobGpusLookup::Answer c;
        for (int i = 0; i < 200 && !c.value; ++i) {
            c = lookup.ask(7, 100ms);
            if (!c.value) std::this_thread::sleep_for(5ms);
        }
        REQUIRE(c.value);
        CHECK(c.value->job_id == 7);
    }
    JobGpusLookup failing(
        [](std::int64_t) -> JobGpus { throw std::runtime_error("job 9: slurm_load_job: Invalid job id specified"); });
    JobGpusLookup::Answer d = failing.ask(9, 1s);
    CHECK_FALSE(d.value);
    CHECK(d.error == "job 9: slurm_load_job: Invalid job id specified");
}

TEST_CASE("narrow multi-node: the first node to ask places the whole job within each node's Slurm GPUs") {
    std::atomic<int> asked{0};
    Service s(narrow_config(test::scratch("narrow-mn.db")), slurm_says({{"n1", {0, 1}}, {"n2", {2, 3}}}, &asked));
    const json first = place_narrow(s, 41, "n2", {2, 3});  // n2's step happens to ask first
    REQUIRE(first["ok"] == true);
    CHECK(first["mode"] == "narrow");
    CHECK(first["reused"] == false);
    const place::RunningJob* job = s.cluster().find(41);
    REQUIRE(job != nullptr);
    REQUIRE(job->where.size() == 2);  // both nodes, at once
    CHECK(job->where[0].node == 0);
    CHECK(job->where[1].node == 1);
    CHECK(subset(job->where[0].gpus, {0, 1}));
    CHECK(subset(job->where[1].gpus, {2, 3}));
    CHECK(gpus(first) == job->where[1].gpus);
    const json second = place_narrow(s, 41, "n1", {0, 1});
    REQUIRE(second["ok"] == true);
    CHECK(second["reused"] == true);  // answered from the whole-job decision
    CHECK(gpus(second) == job->where[0].gpus);
    CHECK(asked == 1);
    CHECK(s.counters().placements == 1);
    const json explain = call(s, {{"op", "explain"}, {"job_id", 41}});
    REQUIRE(explain["explain"].size() == 2);
    for (const json& d : explain["explain"]) {
        CHECK(d["mode"] == "narrow");
        CHECK(d["candidates"][0]["where"].size() == 2);
    }
}

TEST_CASE("narrow multi-node: with a neighbour on one node, the job's GPUs there avoid it") {
    Config c = narrow_config(test::scratch("narrow-mn-neighbour.db"));
    c.profiles = test::scratch("profiles.yaml");
    std::ofstream(c.profiles) << R"(profiles:
  - name: two-per-node
    description: 2 GPUs on each of 2 nodes
    family: gpt
    batch_size: 16
    gpus: 2
    nodes: 2
    iter_time_s: 0.5
    sm_util: 0.9
    mem_bw_util: 0.6
    gpu_mem_gb: 30
    host_pressure: 0.2
)";
    bool may_drop = false;
    SUBCASE("by default every GPU Slurm gave the job stays its own") {}
    SUBCASE("an admin lets narrow mode drop GPUs the profile does not use") { may_drop = true; }
    c.narrow_may_drop_gpus = may_drop;
    Service s(std::move(c), slurm_says({{"n1", {0, 1, 2, 3}}, {"n2", {0, 1, 2, 3}}}));
    REQUIRE(place_narrow(s, 1, "n1", {0, 1}, {"n1"})["ok"] == true);  // a one-node job on n1
    const std::vector<int> held = s.cluster().find(1)->where[0].gpus;
    // A profile asking for 2 GPUs per node, holding 4 on each: narrowed (when allowed), away from job 1's GPUs.
    proto::PlaceRequest r;
    r.job_id = 2;
    r.job_uid = 1000;
    r.node = "n1";
    r.partition = "narrow";
    r.profile = "two-per-node";
    r.slurm_gpus = {0, 1, 2, 3};
    r.job_nodes = {"n1", "n2"};
    const json reply = call(s, r.to_json());
    REQUIRE(reply["ok"] == true);
    const place::RunningJob* job = s.cluster().find(2);
    REQUIRE(job != nullptr);
    REQUIRE(job->where.size() == 2);
    if (!may_drop) {
        for (auto w : job->where) {
            std::sort(w.gpus.begin(), w.gpus.end());
            CHECK(w.gpus == std::vector<int>{0, 1, 2, 3});
        }
        return;
    }
    CHECK(job->where[0].gpus.size() == 2);
    CHECK(job->where[1].gpus.size() == 2);
    for (int g : job->where[0].gpus) CHECK(std::find(held.begin(), held.end(), g) == held.end());
}

TEST_CASE("narrow multi-node: when slurmctld cannot tell, or tells what does not fit, node by node") {
    SUBCASE("slurmctld fails") {
        Service s(narrow_config(test::scratch("narrow-mn-fail.db")),
                  [](std::int64_t) -> JobGpus { throw std::runtime_error("no slurm.conf at /nowhere (SLURM_CONF)"); });
        const json r = place_narrow(s, 5, "n1", {0, 1});
        REQUIRE(r["ok"] == true);
        CHECK(r["mode"] == "narrow");
        CHECK(subset(gpus(r), {0, 1}));
        REQUIRE(s.cluster().find(5) != nullptr);
        CHECK(s.cluster().find(5)->where.size() == 1);  // this node only
        const json other = place_narrow(s, 5, "n2", {2, 3});
        REQUIRE(other["ok"] == true);
        CHECK(other["reused"] == false);  // its own decision
        CHECK(subset(gpus(other), {2, 3}));
    }
    SUBCASE("slurmctld is too slow") {
        // Shared with the query's thread, which outlives the service.
        auto release = std::make_shared<std::atomic<bool>>(false);
        {
            Service s(narrow_config(test::scratch("narrow-mn-slow.db")), [release](std::int64_t id) {
                while (!*release) std::this_thread::sleep_for(1ms);
                return JobGpus{id, {{"n1", {0, 1}}, {"n2", {2, 3}}}};
            });
            const auto t0 = std::chrono::steady_clock::now();
            const json r = place_narrow(s, 5, "n1", {0, 1});
            CHECK(std::chrono::steady_clock::now() - t0 < 250ms);  // within the plugin's deadline
            REQUIRE(r["ok"] == true);
            CHECK(s.cluster().find(5)->where.size() == 1);
        }
        *release = true;
    }
    SUBCASE("several narrow jobs in one round wait for slurmctld 100 ms altogether") {
        auto live = std::make_shared<std::atomic<int>>(0);  // queries still running
        {
            Service s(narrow_config(test::scratch("narrow-mn-round.db")), [live](std::int64_t id) {
                ++*live;
                std::this_thread::sleep_for(90ms);  // each answer in time alone, not three together
                --*live;
                return JobGpus{id, {{"n1", {0, 1}}, {"n2", {2, 3}}}};
            });
            std::vector<std::string> sealed;
            for (std::int64_t job : {5, 6, 7}) {
                proto::PlaceRequest r;
                r.job_id = job;
                r.job_uid = 1000;
                r.node = "n1";
                r.partition = "narrow";
                r.slurm_gpus = {0, 1};
                r.job_nodes = {"n1", "n2"};
                sealed.push_back(proto::seal_request(r.to_json(), test::munge_socket()));
            }
            const auto t0 = std::chrono::steady_clock::now();
            const auto replies = s.handle_round({sealed[0], sealed[1], sealed[2]});
            CHECK(std::chrono::steady_clock::now() - t0 < 200ms);  // 3 x 90 ms would be past the plugin's 250
            for (const std::string& reply : replies) CHECK(json::parse(reply)["ok"] == true);
            CHECK(s.cluster().find(5)->where.size() == 2);  // the first had all the time it needed
            CHECK(s.cluster().find(6)->where.size() == 1);
            CHECK(s.cluster().find(7)->where.size() == 1);
            // The next round has its 100 ms again: once the query left over is done, a job is
            // placed whole again.
            bool whole = false;
            const auto deadline = std::chrono::steady_clock::now() + 5s;
            for (std::int64_t job = 8; !whole && std::chrono::steady_clock::now() < deadline; ++job) {
                REQUIRE(place_narrow(s, job, "n1", {0, 1})["ok"] == true);
                whole = s.cluster().find(static_cast<place::JobId>(job))->where.size() == 2;
            }
            CHECK(whole);
        }
        const auto deadline = std::chrono::steady_clock::now() + 5s;  // the query outlives the service
        while (*live > 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
    }
    SUBCASE("the step lists its GPUs in another order: still one placement") {
        Service s(narrow_config(test::scratch("narrow-mn-order.db")), slurm_says({{"n1", {0, 1}}, {"n2", {2, 3}}}));
        REQUIRE(place_narrow(s, 5, "n1", {1, 0})["ok"] == true);
        CHECK(s.cluster().find(5)->where.size() == 2);
    }
    // Each of these would give some node's plugin GPUs it does not hold: refused as a whole.
    const std::vector<std::pair<const char*, std::vector<std::pair<std::string, std::vector<int>>>>> wrong = {
        {"the asking step holds other GPUs", {{"n1", {2, 3}}, {"n2", {2, 3}}}},
        {"a node the step does not name", {{"n1", {0, 1}}, {"n3", {2, 3}}}},
        {"a node missing", {{"n1", {0, 1}}}},
        {"a GPU colocd.yaml does not have", {{"n1", {0, 1}}, {"n2", {3, 4}}}},
        {"counts that differ", {{"n1", {0, 1}}, {"n2", {1, 2, 3}}}},
        {"a node listed twice", {{"n1", {0, 1}}, {"n1", {0, 1}}}},
    };
    for (const auto& [what, nodes] : wrong) {
        CAPTURE(what);
        Service s(narrow_config(test::scratch("narrow-mn-wrong.db")), slurm_says(nodes));
        const json r = place_narrow(s, 5, "n1", {0, 1});
        REQUIRE(r["ok"] == true);
        CHECK(subset(gpus(r), {0, 1}));
        CHECK(s.cluster().find(5)->where.size() == 1);
    }
}
