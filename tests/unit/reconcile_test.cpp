#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <thread>

#include "daemon/log.hpp"
#include "daemon/reconcile.hpp"
#include "daemon/service/background_query.hpp"
#include "daemon/service/service.hpp"
#include "proto/envelope.hpp"
#include "proto/messages.hpp"
#include "tests/unit/test_env.hpp"

using namespace coloc;
using namespace coloc::daemon;
using proto::json;
using slurm::SlurmJob;
using slurm::SlurmJobNode;
using slurm::SlurmSnapshot;

namespace {

const bool quiet = (set_log_level(LogLevel::Error), true);

SlurmJob running_job(std::int64_t id, std::int64_t start, std::vector<std::string> nodes) {
    SlurmJob j;
    j.job_id = id;
    j.uid = 1000;
    j.running = true;
    j.start_time = start;
    for (auto& n : nodes) j.nodes.push_back({n, {}, 1});
    return j;
}

SlurmJob ended_job(std::int64_t id, std::int64_t end, int exit_status) {
    SlurmJob j;
    j.job_id = id;
    j.start_time = end - 5;
    j.end_time = end;
    j.exit_status = exit_status;
    return j;
}

auto never_recorded = [](std::int64_t, const std::string&) { return false; };
auto all_nodes_known = [](const std::string&) { return true; };

}  // namespace

TEST_CASE("reconcile: placements of jobs Slurm ended or forgot are closed, the rest kept") {
    SlurmSnapshot slurm;
    slurm.taken_at = 1000;
    slurm.jobs = {ended_job(1, 900, 2), running_job(2, 800, {"n1"}), ended_job(3, 995, 0), running_job(5, 800, {"n2"})};
    std::vector<OpenPlacement> open = {
        {1, "n1", 850},  // Slurm ended it at 900 with exit 2
        {2, "n1", 850},  // runs there
        {3, "n1", 850},  // ended 5 s before the snapshot: the plugin's report is still due
        {4, "n1", 850},  // Slurm no longer knows it
        {5, "n1", 850},  // Slurm runs it, but on n2
        {6, "n1", 995},  // placed after Slurm's answer was under way
    };
    ReconcilePlan plan = plan_reconciliation(open, slurm, never_recorded, [](const std::string&) { return false; });
    REQUIRE(plan.close.size() == 3);
    CHECK(plan.close[0].job_id == 1);
    CHECK(plan.close[0].time == 900);
    CHECK(plan.close[0].exit_status == 2);
    CHECK(plan.close[0].job_done);
    CHECK(plan.close[1].job_id == 4);
    CHECK(plan.close[1].time == 1000);
    CHECK_FALSE(plan.close[1].exit_status.has_value());
    CHECK(plan.close[2].job_id == 5);
    CHECK(plan.adopt.empty());  // no node is known
}

TEST_CASE("reconcile: a job is done only when its last open node is closed") {
    SlurmSnapshot slurm;
    slurm.taken_at = 1000;
    slurm.jobs = {running_job(7, 800, {"n2"})};
    ReconcilePlan plan = plan_reconciliation({{7, "n1", 800}, {7, "n2", 800}, {8, "n1", 800}, {8, "n3", 800}}, slurm,
                                             never_recorded, all_nodes_known);
    REQUIRE(plan.close.size() == 3);
    CHECK(plan.close[0].job_id == 7);
    CHECK_FALSE(plan.close[0].job_done);  // still runs on n2
    CHECK(plan.close[1].job_done);
    CHECK(plan.close[2].job_done);
}

TEST_CASE("reconcile: running jobs colocd never recorded are adopted node by node") {
    SlurmSnapshot slurm;
    slurm.taken_at = 1000;
    SlurmJob multi = running_job(10, 700, {"n1", "n2", "x9"});
    multi.nodes[1].gpus = {1, 3};
    slurm.jobs = {multi, running_job(11, 995, {"n1"}), ended_job(12, 900, 0)};
    auto recorded = [](std::int64_t job, const std::string& node) { return job == 10 && node == "n1"; };
    auto known = [](const std::string& node) { return node != "x9"; };
    ReconcilePlan plan = plan_reconciliation({}, slurm, recorded, known);
    REQUIRE(plan.adopt.size() == 1);  // n1 is recorded, x9 unknown, 11 too young to judge, 12 ended
    CHECK(plan.adopt[0].job_id == 10);
    CHECK(plan.adopt[0].where.node == "n2");
    CHECK(plan.adopt[0].where.gpus == std::vector<int>{1, 3});
    CHECK(plan.adopt[0].since == 700);
}

TEST_CASE("reconcile: Slurm's per-node GRES detail gives GPUs where it names them") {
    SlurmJobNode a = slurm::parse_gres_detail("n1", "gpu:2(IDX:0-1)");
    CHECK(a.gpus == std::vector<int>{0, 1});
    CHECK(a.gpu_count == 2);
    SlurmJobNode b = slurm::parse_gres_detail("n1", "gpu:a100:3(IDX:0,2-3),gpuslot:1");
    CHECK(b.gpus == std::vector<int>{0, 2, 3});
    CHECK(b.gpu_count == 3);
    SlurmJobNode c = slurm::parse_gres_detail("n1", "gpuslot:2");
    CHECK(c.gpus.empty());
    CHECK(c.gpu_count == 2);
    CHECK(slurm::parse_gres_detail("n1", "").gpu_count == 0);
    CHECK(slurm::parse_gres_detail("n1", "gpu:(IDX:").gpus.empty());
}

TEST_CASE("background query: the query runs on its own thread and poll never waits for it") {
    std::atomic<bool> release{false};
    std::atomic<int> queries{0};
    BackgroundQuery runner(60, [&] {
        ++queries;
        while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        SlurmSnapshot s;
        s.taken_at = 42;
        return s;
    });
    const auto t0 = std::chrono::steady_clock::now();
    CHECK_FALSE(runner.poll(0).has_value());   // starts the query
    CHECK_FALSE(runner.poll(10).has_value());  // under way: no answer, no second query
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(100));
    release = true;
    std::optional<SlurmAnswer> answer;
    for (int i = 0; i < 2000 && !answer; ++i) {
        answer = runner.poll(20);
        if (!answer) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    REQUIRE(answer.has_value());
    CHECK(answer->ok);
    CHECK(answer->snapshot.taken_at == 42);
    CHECK_FALSE(runner.poll(30000).has_value());  // the next one is due after 60 s
    CHECK(queries == 1);
}

TEST_CASE("background query: a failing query is an answer with the reason; interval 0 never asks") {
    BackgroundQuery failing(1, []() -> SlurmSnapshot { throw std::runtime_error("slurmctld does not answer"); });
    std::optional<SlurmAnswer> answer;
    failing.poll(0);
    for (int i = 0; i < 2000 && !answer; ++i) {
        answer = failing.poll(1);
        if (!answer) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    REQUIRE(answer.has_value());
    CHECK_FALSE(answer->ok);
    CHECK(answer->error == "slurmctld does not answer");
    bool asked = false;
    BackgroundQuery off(0, [&] {
        asked = true;
        return SlurmSnapshot{};
    });
    CHECK_FALSE(off.poll(0).has_value());
    CHECK_FALSE(off.enabled());
    CHECK_FALSE(asked);
}

namespace {

Config reconcile_config(const std::string& db) {
    Config c = parse_config(R"(listen: [ "ipc:///tmp/unused.sock" ]
reconcile_interval_s: 0
partitions:
  bind: { mode: bind }
node_types:
  quad: { gpus: 4, slots_per_gpu: 2 }
nodes:
  - { names: "n[1-2]", type: quad }
)",
                            "test.yaml");
    c.database = db;
    c.munge_socket = test::munge_socket();
    return c;
}

json call(Service& s, json body) {
    return json::parse(s.handle(proto::seal_request(std::move(body), test::munge_socket())));
}

}  // namespace

TEST_CASE("reconcile: colocd closes what ended while it was away, adopts what it never placed, and says so") {
    const std::string db = test::scratch("reconcile.db");
    const std::int64_t now = static_cast<std::int64_t>(std::time(nullptr));
    {
        Service s(reconcile_config(db));
        proto::PlaceRequest r;
        r.job_id = 1;
        r.job_uid = 1000;
        r.node = "n1";
        r.partition = "bind";
        r.slots = 2;
        r.job_nodes = {"n1"};
        REQUIRE(call(s, r.to_json())["ok"] == true);
    }
    // colocd restarts; meanwhile job 1 ended and job 2 started on n2 with Slurm's GPUs 2 and 3.
    Service s(reconcile_config(db));
    REQUIRE(s.cluster().job_count() == 1);
    SlurmSnapshot slurm;
    slurm.taken_at = now + 30;
    SlurmJob two = running_job(2, now + 1, {"n2"});
    two.partition = "bind";
    two.nodes[0].gpus = {2, 3};
    slurm.jobs = {ended_job(1, now + 5, 1), two};
    auto done = s.reconciliation().reconcile(slurm);
    CHECK(done.closed == 1);
    CHECK(done.adopted == 1);
    CHECK(s.cluster().free_slots(0) == 8);
    CHECK(s.cluster().free_slots(1) == 6);

    json h1 = call(s, {{"op", "history"}, {"job_id", 1}})["history"][0];
    CHECK(h1["state"] == "ended");
    CHECK(h1["end_reason"] == kEndedWhileAway);
    CHECK(h1["end"] == now + 5);
    CHECK(h1["exit_status"] == 1);
    CHECK(h1["placements"][0]["ended"] == now + 5);
    json h2 = call(s, {{"op", "history"}, {"job_id", 2}})["history"][0];
    CHECK(h2["state"] == "running");
    CHECK(h2["placements"][0]["source"] == "reconciled");
    CHECK(h2["placements"][0]["gpus"] == json::array({2, 3}));

    json st = call(s, {{"op", "status"}})["status"];
    CHECK(st["last_reconcile"] == now + 30);
    CHECK(st["reconcile_closed"] == 1);
    CHECK(st["reconcile_adopted"] == 1);
    CHECK(st["reconcile_error"] == "");

    // Once more with the same answer: nothing left to do.
    auto again = s.reconciliation().reconcile(slurm);
    CHECK(again.closed == 0);
    CHECK(again.adopted == 0);

    // The plugin's own report, when it comes after all, replaces colocd's mark.
    REQUIRE(call(s, proto::EndedReport{2, "n2", 0, 9.0, now + 40}.to_json())["ok"] == true);
    json h2b = call(s, {{"op", "history"}, {"job_id", 2}})["history"][0];
    CHECK(h2b["state"] == "ended");
    CHECK(h2b["end_reason"].is_null());
    CHECK(s.cluster().free_slots(1) == 8);
}
