#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "daemon/log.hpp"
#include "daemon/service/service.hpp"
#include "proto/envelope.hpp"
#include "proto/messages.hpp"
#include "tests/unit/test_env.hpp"

using namespace coloc;
using namespace coloc::daemon;
using proto::json;

namespace {

// Decisions are logged at info level; the tests read replies, not logs.
const bool quiet = (set_log_level(LogLevel::Error), true);

Config test_config(const std::string& db) {
    Config c = parse_config(R"(listen: [ "ipc:///tmp/unused.sock" ]
partitions:
  bind: { mode: bind }
  narrow: { mode: narrow }
node_types:
  quad: { gpus: 4, slots_per_gpu: 2, nvlink_islands: [[0, 1], [2, 3]] }
nodes:
  - { names: "n[1-2]", type: quad, link: leaf1 }
)",
                            "test.yaml");
    c.database = db;
    c.munge_socket = test::munge_socket();
    return c;
}

json call(Service& s, json body) {
    return json::parse(s.handle(proto::seal_request(std::move(body), test::munge_socket())));
}

// The job's record as `colocctl history JOB` reads it: its state, owner and placements.
json history_of(Service& s, std::int64_t job) { return call(s, {{"op", "history"}, {"job_id", job}})["history"][0]; }

json place_job(Service& s, std::int64_t job, const std::string& partition, int slots,
               std::vector<int> slurm_gpus = {}) {
    proto::PlaceRequest r;
    r.job_id = job;
    r.job_uid = 1000;
    r.node = "n1";
    r.partition = partition;
    r.slots = slots;
    r.slurm_gpus = std::move(slurm_gpus);
    r.job_nodes = {"n1"};
    return call(s, r.to_json());
}

}  // namespace

TEST_CASE("service: eight one-slot bind jobs on a node fill each GPU to its slots and no further") {
    Service s(test_config(test::scratch("svc.db")));
    std::map<int, int> per_gpu;
    for (int job = 1; job <= 8; ++job) {
        json r = place_job(s, job, "bind", 1);
        REQUIRE(r["ok"] == true);
        CHECK(r["mode"] == "bind");
        REQUIRE(r["gpus"].size() == 1);
        int gpu = r["gpus"][0];
        ++per_gpu[gpu];
        if (job <= 4) CHECK(per_gpu[gpu] == 1);  // fewer jobs than GPUs: no sharing
        CHECK(r["decision"].get<std::int64_t>() > 0);
    }
    for (auto [gpu, n] : per_gpu) CHECK(n == 2);
    json full = place_job(s, 9, "bind", 1);
    CHECK(full["ok"] == false);
    CHECK(full["error"]["code"] == "no_capacity");
}

TEST_CASE("service: a later step of the same job on the same node gets the same decision") {
    Service s(test_config(test::scratch("svc.db")));
    json a = place_job(s, 5, "bind", 2);
    json b = place_job(s, 5, "bind", 2);
    REQUIRE(a["ok"] == true);
    CHECK(b["decision"] == a["decision"]);
    CHECK(b["gpus"] == a["gpus"]);
    CHECK(b["reused"] == true);
    CHECK(s.counters().placements == 1);
}

TEST_CASE("service: narrow jobs get a subset of their own GPUs") {
    Service s(test_config(test::scratch("svc.db")));
    json r = place_job(s, 7, "narrow", 0, {1, 3});
    REQUIRE(r["ok"] == true);
    CHECK(r["mode"] == "narrow");
    for (int g : r["gpus"]) CHECK((g == 1 || g == 3));
    json bad = place_job(s, 8, "narrow", 0, {7});
    CHECK(bad["error"]["code"] == "bad_field");
}

TEST_CASE("service: narrow mode keeps every GPU the step holds unless the admin lets it drop some") {
    Config c = test_config(test::scratch("svc-narrow-keep.db"));
    c.profiles = test::scratch("one-gpu.yaml");
    std::ofstream(c.profiles) << R"(profiles:
  - name: one-gpu
    description: a one-GPU job
    family: resnet
    batch_size: 64
    gpus: 1
    iter_time_s: 0.2
    sm_util: 0.8
    mem_bw_util: 0.5
    gpu_mem_gb: 10
    host_pressure: 0.1
)";
    bool may_drop = false;
    SUBCASE("default") {}
    SUBCASE("narrow_may_drop_gpus") { may_drop = true; }
    c.narrow_may_drop_gpus = may_drop;
    Service s(std::move(c));
    proto::PlaceRequest r;
    r.job_id = 30;
    r.job_uid = 1000;
    r.node = "n1";
    r.mode = proto::GpuMode::Narrow;
    r.profile = "one-gpu";
    r.slurm_gpus = {1, 3};
    const json reply = call(s, r.to_json());
    REQUIRE(reply["ok"] == true);
    std::vector<int> got = reply["gpus"].get<std::vector<int>>();
    std::sort(got.begin(), got.end());
    if (may_drop) {
        REQUIRE(got.size() == 1);
        CHECK((got[0] == 1 || got[0] == 3));
    } else {
        CHECK(got == std::vector<int>{1, 3});
    }
}

TEST_CASE("service: ended releases the slots and closes the history") {
    Service s(test_config(test::scratch("svc.db")));
    REQUIRE(place_job(s, 1, "bind", 4)["ok"] == true);
    CHECK(s.cluster().free_slots(0) == 4);
    json e = call(s, proto::EndedReport{1, "n1", 0, 3.5, 0}.to_json());
    REQUIRE(e["ok"] == true);
    CHECK(s.cluster().free_slots(0) == 8);
    json h = call(s, {{"op", "history"}, {"job_id", 1}});
    REQUIRE(h["ok"] == true);
    CHECK(h["history"][0]["state"] == "ended");
    CHECK(h["history"][0]["elapsed_s"] == 3.5);
}

TEST_CASE("service: a job's history gives what it would have taken alone, from the mean speed of its reports") {
    Service s(test_config(test::scratch("svc.db")));
    REQUIRE(place_job(s, 1, "bind", 1)["ok"] == true);
    const double solo = s.cluster().find(1)->profile->iter_time_s;
    REQUIRE(call(s, {{"op", "observe"}, {"job_id", 1}, {"iter_time_s", solo * 2.0}})["ok"] == true);  // half speed
    REQUIRE(call(s, {{"op", "observe"}, {"job_id", 1}, {"iter_time_s", solo}})["ok"] == true);        // full speed
    REQUIRE(call(s, proto::EndedReport{1, "n1", 0, 100.0, 0}.to_json())["ok"] == true);
    REQUIRE(place_job(s, 2, "bind", 1)["ok"] == true);
    REQUIRE(call(s, proto::EndedReport{2, "n1", 0, 50.0, 0}.to_json())["ok"] == true);
    const json reported = history_of(s, 1), silent = history_of(s, 2);
    CHECK(reported["work_s"].get<double>() == doctest::Approx(75.0));  // 100 s at a mean speed of 0.75
    CHECK(silent["work_s"].is_null());
    // No read of Slurm's queue held them: the submit time is when colocd first saw the job.
    CHECK(silent["submit"].get<std::int64_t>() > 0);
    CHECK(silent["time_limit_s"].is_null());
}

TEST_CASE("service: fallback placements the plugin made alone are adopted and counted") {
    Service s(test_config(test::scratch("svc.db")));
    proto::PlaceRequest r;
    r.job_id = 20;
    r.node = "n1";
    r.partition = "bind";
    r.slots = 1;
    r.unreported = {{19, {0}, 100}, {18, {0}, 100}, {17, {1}, 100, 160, 3, 60.0}};
    json reply = call(s, r.to_json());
    REQUIRE(reply["ok"] == true);
    CHECK(s.counters().adopted == 3);
    CHECK(s.cluster().job_count() == 3);  // 19, 18 and the new 20; 17 already ended
    json h = call(s, {{"op", "history"}, {"job_id", 17}});
    CHECK(h["history"][0]["state"] == "ended");
    CHECK(h["history"][0]["exit_status"] == 3);
    CHECK(reply["gpus"][0] != 0);  // GPU 0 is full with the two adopted jobs
    json explain = call(s, {{"op", "explain"}, {"job_id", 19}});
    CHECK(explain["explain"][0]["source"] == "fallback");
}

TEST_CASE("service: a local choice reported as the job starts is adopted with its owner; the job's reports are taken") {
    Service s(test_config(test::scratch("svc.db")));
    proto::StartedReport started{31, 4242, "n1", 0, {2}, 100};
    REQUIRE(call(s, started.to_json())["ok"] == true);
    CHECK(s.counters().adopted == 1);
    REQUIRE(s.cluster().find(31) != nullptr);
    CHECK(s.cluster().free_slots(0) == 7);
    json job = history_of(s, 31);
    REQUIRE(job.is_object());
    CHECK(job["uid"] == 4242);
    CHECK(job["state"] == "running");
    json observed = call(s, {{"op", "observe"}, {"job_id", 31}, {"iter_time_s", 0.5}});
    CHECK(observed["ok"] == true);
    // Told again with the node's next request: the same placement, adopted once.
    proto::PlaceRequest r;
    r.job_id = 32;
    r.node = "n1";
    r.partition = "bind";
    r.slots = 1;
    r.unreported = {{31, {2}, 100}};
    REQUIRE(call(s, r.to_json())["ok"] == true);
    CHECK(s.counters().adopted == 1);
    CHECK(history_of(s, 31)["placements"].size() == 1);
}

TEST_CASE("service: a job the plugin ran elsewhere than colocd chose on a node is moved there, over slots or not") {
    Service s(test_config(test::scratch("svc.db")));
    // GPU 0 of n1: two jobs colocd placed; job 3 then placed by colocd on GPU 1.
    for (int job = 1; job <= 8; ++job) REQUIRE(place_job(s, job, "bind", 1)["ok"] == true);
    std::vector<int> on_gpu(4, 0);
    std::int64_t first_on_1 = 0;
    for (int job = 1; job <= 8; ++job) {
        const int g = history_of(s, job)["placements"][0]["gpus"][0];
        ++on_gpu[static_cast<std::size_t>(g)];
        if (g == 1 && first_on_1 == 0) first_on_1 = job;
    }
    REQUIRE(on_gpu == std::vector<int>{2, 2, 2, 2});
    // The plugin found GPU 1 full in its record and chose GPU 0: colocd records where it runs,
    // though GPU 0 is then over its slots in colocd's view (it records, it does not refuse).
    proto::StartedReport moved{first_on_1, 1000, "n1", 0, {0}, 100};
    json reply = call(s, moved.to_json());
    REQUIRE(reply["ok"] == true);
    CHECK(s.counters().moved == 1);
    CHECK(s.counters().adopted == 0);
    json rows = history_of(s, first_on_1)["placements"];
    REQUIRE(rows.size() == 1);
    CHECK(rows[0]["gpus"] == json::array({0}));
    CHECK(rows[0]["source"] == "fallback");
    const place::RunningJob* job = s.cluster().find(static_cast<place::JobId>(first_on_1));
    REQUIRE(job != nullptr);
    CHECK(job->on_node(0)->gpus == std::vector<int>{0});
    CHECK(s.cluster().free_slots(0, 1) == 1);
    CHECK(s.cluster().free_slots(0, 0) <= 0);  // over its slots, as the node runs it
    // The same report again changes nothing; its end closes it where it ran.
    REQUIRE(call(s, moved.to_json())["ok"] == true);
    CHECK(s.counters().moved == 1);
    REQUIRE(call(s, proto::EndedReport{first_on_1, "n1", 0, 2.0, 0}.to_json())["ok"] == true);
    CHECK(s.cluster().find(static_cast<place::JobId>(first_on_1)) == nullptr);
}

TEST_CASE("service: a moved placement survives a restart where it runs") {
    std::string db = test::scratch("svc.db");
    {
        Service s(test_config(db));
        REQUIRE(place_job(s, 1, "bind", 1)["gpus"] == json{0});
        REQUIRE(call(s, proto::StartedReport{1, 1000, "n1", 0, {3}, 100}.to_json())["ok"] == true);
    }
    Service again(test_config(db));
    const place::RunningJob* job = again.cluster().find(1);
    REQUIRE(job != nullptr);
    CHECK(job->on_node(0)->gpus == std::vector<int>{3});
}

TEST_CASE("service: state survives a restart from the database") {
    std::string db = test::scratch("svc.db");
    {
        Service s(test_config(db));
        REQUIRE(place_job(s, 1, "bind", 3)["ok"] == true);
    }
    Service again(test_config(db));
    CHECK(again.cluster().job_count() == 1);
    CHECK(again.cluster().free_slots(0) == 5);
}

TEST_CASE("service: refused requests change nothing") {
    Service s(test_config(test::scratch("svc.db")));
    proto::PlaceRequest r;
    r.job_id = 3;
    r.node = "n1";
    r.partition = "bind";
    r.slots = 1;
    json body = r.to_json();
    body["v"] = proto::kVersion;

    json missing = json::parse(s.handle(body.dump()));
    CHECK(missing["error"]["code"] == "auth_missing");

    json forged = body;
    forged["cred"] = "MUNGE:AwQFAAB4c2VxGarbageGarbage:";
    CHECK(json::parse(s.handle(forged.dump()))["error"]["code"] == "auth_invalid");

    // A real credential for another body.
    std::string other = proto::seal_request({{"op", "status"}}, test::munge_socket());
    json lifted = body;
    lifted["cred"] = json::parse(other)["cred"];
    CHECK(json::parse(s.handle(lifted.dump()))["error"]["code"] == "auth_mismatch");

    std::string good = proto::seal_request(r.to_json(), test::munge_socket());
    CHECK(json::parse(s.handle(good))["ok"] == true);
    CHECK(json::parse(s.handle(good))["error"]["code"] == "auth_replayed");

    CHECK(s.counters().placements == 1);
    CHECK(s.cluster().job_count() == 1);
    CHECK(call(s, {{"op", "frobnicate"}})["error"]["code"] == "unknown_op");
    json bad = call(s, {{"op", "place"}, {"job_id", "x"}, {"node", "n1"}});
    CHECK(bad["error"]["code"] == "bad_field");
    CHECK(bad["error"]["message"].get<std::string>().find("job_id") != std::string::npos);
    json unknown_node = call(s, {{"op", "place"}, {"job_id", 4}, {"node", "zz9"}, {"slots", 1}});
    CHECK(unknown_node["error"]["code"] == "not_found");
    CHECK(s.cluster().job_count() == 1);
    CHECK(s.counters().refused >= 6);
}

TEST_CASE("service: observed iteration times teach the model, and what it learned survives a restart") {
    std::string db = test::scratch("learn.db");
    double learned = 0;
    {
        Service s(test_config(db));
        REQUIRE(place_job(s, 1, "bind", 1)["ok"] == true);
        REQUIRE(place_job(s, 2, "bind", 4)["ok"] == true);  // shares job 1's GPU
        const double solo = s.cluster().find(1)->profile->iter_time_s;
        json first;
        for (int i = 0; i < 40; ++i) {
            json r = call(s, {{"op", "observe"}, {"job_id", 1}, {"iter_time_s", solo * 3.0}});
            REQUIRE(r["ok"] == true);
            if (i == 0) first = r;
        }
        json last = call(s, {{"op", "observe"}, {"job_id", 1}, {"iter_time_s", solo * 3.0}});
        CHECK(last["measured_slowdown"].get<double>() == doctest::Approx(3.0));
        // The prediction for this recurring pairing moves to what was observed.
        CHECK(std::abs(last["predicted_now"].get<double>() - 3.0) <
              std::abs(first["predicted_before"].get<double>() - 3.0));
        CHECK(last["predicted_now"].get<double>() == doctest::Approx(3.0).epsilon(0.1));
        learned = last["predicted_now"];
        CHECK(s.counters().observations == 41);
        CHECK(call(s, {{"op", "observe"}, {"job_id", 99}, {"iter_time_s", 1.0}})["error"]["code"] == "not_found");
        CHECK(call(s, {{"op", "observe"}, {"job_id", 1}})["error"]["code"] == "bad_field");
    }
    Service again(test_config(db));
    json r =
        call(again,
             {{"op", "observe"}, {"job_id", 1}, {"iter_time_s", again.cluster().find(1)->profile->iter_time_s * 3.0}});
    REQUIRE(r["ok"] == true);
    CHECK(r["predicted_before"].get<double>() == doctest::Approx(learned).epsilon(0.02));
}

TEST_CASE("service: history of one job lists its reports in order, each with the neighbours of that moment") {
    Service s(test_config(test::scratch("observations.db")));
    REQUIRE(place_job(s, 1, "bind", 1)["ok"] == true);
    REQUIRE(call(s, {{"op", "observe"}, {"job_id", 1}, {"iter_time_s", 0.5}})["ok"] == true);
    REQUIRE(place_job(s, 2, "bind", 4)["ok"] == true);  // shares job 1's GPU
    REQUIRE(call(s, {{"op", "observe"}, {"job_id", 1}, {"iter_time_s", 0.8}})["ok"] == true);
    const json obs = history_of(s, 1)["observations"];
    REQUIRE(obs.size() == 2);
    CHECK(obs[0]["iter_time_s"] == 0.5);
    CHECK(obs[0]["neighbours"].empty());
    CHECK(obs[1]["iter_time_s"] == 0.8);
    REQUIRE(obs[1]["neighbours"].size() == 1);
    CHECK(obs[1]["neighbours"][0]["where"] == "gpu");
    CHECK(history_of(s, 2)["observations"].empty());
}

TEST_CASE("service: metrics in Prometheus text count what happened") {
    Service s(test_config(test::scratch("metrics.db")));
    REQUIRE(place_job(s, 1, "bind", 2)["ok"] == true);
    CHECK(call(s, {{"op", "frobnicate"}})["ok"] == false);
    json r = call(s, {{"op", "metrics"}});
    REQUIRE(r["ok"] == true);
    std::string text = r["metrics"];
    CHECK(text.find("coloc_placements_total 1\n") != std::string::npos);
    CHECK(text.find("coloc_running_jobs 1\n") != std::string::npos);
    CHECK(text.find("coloc_gpu_slots_used 2\n") != std::string::npos);
    CHECK(text.find("code=\"unknown_op\"") != std::string::npos);
    CHECK(text.find("op=\"place\"") != std::string::npos);
}
