// Learning pair delays from ended jobs' elapsed times: the window colocd keeps
// (model::ElapsedWindow), the learner it feeds (Learner::learn_elapsed), colocd at `ended`, and
// sacct -P as offline input (replay::history_from_trace).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "daemon/log.hpp"
#include "daemon/service/service.hpp"
#include "model/coloc_model.hpp"
#include "model/elapsed_window.hpp"
#include "model/run_history.hpp"
#include "proto/envelope.hpp"
#include "proto/messages.hpp"
#include "replay/readers.hpp"
#include "replay/trace_history.hpp"
#include "tests/unit/test_env.hpp"

using namespace coloc;
using proto::json;

namespace {

// One run of `job` beside `neighbour` on one GPU for all its solo work: it takes work / speed.
model::EndedRun shared_run(const std::string& job, const std::string& neighbour, double solo_s, double speed,
                           double noise = 0) {
    model::EndedRun r;
    r.job = job;
    r.solo_s = solo_s;
    r.elapsed_s = solo_s / speed * (1 + noise);
    r.intervals.push_back({r.elapsed_s, {{neighbour, model::Sharing::Gpu}}});
    return r;
}

model::ProfileCatalogue two_profiles() {
    model::ProfileCatalogue c;
    for (const char* name : {"p1", "p2"}) {
        model::JobProfile p;
        p.name = name;
        c.intern(p);
    }
    return c;
}

double predicted_speed(const model::ColocModel& m, const std::string& job, const std::string& neighbour) {
    const model::Neighbour n{m.catalogue().find(neighbour), model::Sharing::Gpu, std::nullopt};
    return m.predict(*m.catalogue().find(job), std::span(&n, 1)).speed;
}

}  // namespace

TEST_CASE("elapsed window: noisy runs are counted and left out; the latest runs kept; refits at their cadence") {
    model::ElapsedWindowOptions o;
    o.capacity = 3;
    o.refit_every = 2;
    model::ElapsedWindow w(o);
    model::EndedRun failed = shared_run("p1", "p2", 1000, 0.5);
    failed.state = "FAILED";
    model::EndedRun cancelled = failed;
    cancelled.state = "CANCELLED";
    CHECK_FALSE(w.add(failed));
    CHECK_FALSE(w.add(cancelled));
    CHECK_FALSE(w.add(shared_run("p1", "p2", 100, 0.5)));  // 200 s: start-up dominates
    model::EndedRun unknown = shared_run("p1", "p2", 1000, 0.5);
    unknown.solo_s = 0;  // no solo work known
    CHECK_FALSE(w.add(unknown));
    model::EndedRun alone = shared_run("p1", "p2", 1000, 1);
    alone.intervals = {{1000, {}}};
    CHECK_FALSE(w.add(alone));
    CHECK(w.runs().empty());
    CHECK(w.left_out().failed == 2);
    CHECK(w.left_out().too_short == 1);
    CHECK(w.left_out().no_solo == 1);
    CHECK(w.left_out().alone == 1);

    CHECK_FALSE(w.add(shared_run("p1", "p2", 1000, 0.5)));
    CHECK(w.add(shared_run("p1", "p2", 1100, 0.5)));  // the second usable run: a refit is due
    CHECK_FALSE(w.add(shared_run("p1", "p2", 1200, 0.5)));
    CHECK(w.add(shared_run("p1", "p2", 1300, 0.5)));
    CHECK(w.used() == 4);
    REQUIRE(w.runs().size() == 3);  // the oldest dropped
    CHECK(w.runs().front().solo_s == 1100);
    CHECK(w.left_out().total() == 5);
}

TEST_CASE("learn_elapsed: jobs ending one by one move the prediction toward the truth; a refit replaces") {
    model::ColocParams params;
    params.gpu_type = "v100";
    model::ColocModel m(two_profiles(), params);
    constexpr double kTruth = 0.55;  // p1's speed beside p2 on one GPU
    const double before = predicted_speed(m, "p1", "p2");
    REQUIRE(std::abs(before - kTruth) > 0.1);  // the prior is elsewhere: there is something to learn

    // Noise of +-4 % on elapsed times, alternating; noisy runs in between change nothing.
    std::vector<model::EndedRun> ended;
    double error = std::abs(before - kTruth);
    for (int k = 0; k < 8; ++k) {
        ended.push_back(shared_run("p1", "p2", 1000 + 100 * k, kTruth, k % 2 ? 0.04 : -0.04));
        model::EndedRun failed = shared_run("p1", "p2", 1000, 0.2);
        failed.state = "FAILED";
        ended.push_back(failed);
        const model::IntervalFit fit = m.learn_elapsed(ended, {}, "v100");
        CHECK(fit.left_out.failed == k + 1);
        CHECK(fit.used == k + 1);
        const double now = std::abs(predicted_speed(m, "p1", "p2") - kTruth);
        CAPTURE(k);
        CHECK(now <= error + 0.01);  // never moves away (beyond the noise)
        error = now;
    }
    CHECK(error < 0.03);
    // One settled pair, kept for the GPU type given; a refit on the same runs does not double it.
    REQUIRE(m.elapsed_pairs().all().size() == 1);
    CHECK(m.elapsed_pairs().all().begin()->first == model::ObservedPairs::Key{"v100", "p1", "p2"});
    const double settled = predicted_speed(m, "p1", "p2");
    m.learn_elapsed(ended, {}, "v100");
    CHECK(predicted_speed(m, "p1", "p2") == doctest::Approx(settled).epsilon(1e-6));

    // What was learned travels with the parameters; a pair the job reported itself wins.
    model::ColocModel restarted(two_profiles(), params);
    restarted.load_params_json(m.params_json());
    CHECK(predicted_speed(restarted, "p1", "p2") == doctest::Approx(settled).epsilon(1e-6));
    const model::Neighbour n{restarted.catalogue().find("p2"), model::Sharing::Gpu, std::nullopt};
    restarted.observe(*restarted.catalogue().find("p1"), std::span(&n, 1), 1 / 0.8);
    CHECK(predicted_speed(restarted, "p1", "p2") == doctest::Approx(0.8).epsilon(0.02));
}

TEST_CASE("learn_elapsed: runs without enough evidence leave the model as it was") {
    model::ColocModel m(two_profiles());
    const double before = predicted_speed(m, "p1", "p2");
    model::EndedRun brief = shared_run("p1", "p2", 1000, 0.5);
    brief.intervals = {{brief.elapsed_s - 30, {}}, {30, {{"p2", model::Sharing::Gpu}}}};  // shared 30 s only
    const model::IntervalFit fit = m.learn_elapsed({brief}, {}, "v100");
    CHECK(fit.used == 1);
    CHECK(m.elapsed_pairs().empty());
    CHECK(predicted_speed(m, "p1", "p2") == doctest::Approx(before));
}

// --- in colocd -------------------------------------------------------------------------------

namespace {

const bool quiet = (daemon::set_log_level(daemon::LogLevel::Error), true);

// Two one-GPU nodes with two slots each: two 1-slot jobs on a node share its GPU.
daemon::Config one_gpu_nodes(const std::string& db) {
    const std::string profiles = test::scratch("elapsed-profiles.yaml");
    std::ofstream(profiles) << "profiles:\n  - name: p1\n  - name: p2\n";
    daemon::Config c = daemon::parse_config(R"(listen: [ "ipc:///tmp/unused.sock" ]
partitions:
  bind: { mode: bind }
node_types:
  one: { gpus: 1, slots_per_gpu: 2 }
nodes:
  - { names: "n[1-2]", type: one, link: leaf1 }
elapsed_refit_every: 1
)",
                                            "test.yaml");
    c.database = db;
    c.profiles = profiles;
    c.munge_socket = test::munge_socket();
    return c;
}

json call(daemon::Service& s, json body) {
    return json::parse(s.handle(proto::seal_request(std::move(body), test::munge_socket())));
}

json place_job(daemon::Service& s, std::int64_t job, const std::string& node, const std::string& profile) {
    proto::PlaceRequest r;
    r.job_id = job;
    r.job_uid = 1000;
    r.node = node;
    r.partition = "bind";
    r.slots = 1;
    r.job_nodes = {node};
    r.job_name = "train";
    r.profile = profile;
    return call(s, r.to_json());
}

json end(daemon::Service& s, std::int64_t job, const std::string& node, int exit_status, double elapsed_s,
         std::int64_t at) {
    proto::EndedReport r;
    r.job_id = job;
    r.node = node;
    r.exit_status = exit_status;
    r.elapsed_s = elapsed_s;
    r.time = at;
    return call(s, r.to_json());
}

std::int64_t now() { return static_cast<std::int64_t>(std::time(nullptr)); }

}  // namespace

TEST_CASE("colocd: a job ending with a known elapsed time moves the placement's prediction; noise is counted") {
    const std::string db = test::scratch("elapsed.db");
    constexpr double kTruth = 0.5;  // p1 beside p2 takes twice its solo time
    double learned = 0;
    {
        daemon::Service s(one_gpu_nodes(db));
        // p1's solo work: a run alone (counted as never shared).
        REQUIRE(place_job(s, 1, "n1", "p1")["ok"] == true);
        REQUIRE(end(s, 1, "n1", 0, 1000, now() + 1000)["ok"] == true);

        double error = 1;
        std::int64_t id = 10;
        for (int round = 0; round < 3; ++round, id += 2) {
            REQUIRE(place_job(s, id, "n1", "p2")["ok"] == true);
            const json reply = place_job(s, id + 1, "n1", "p1");  // beside p2 on n1's GPU
            REQUIRE(reply["ok"] == true);
            const double speed = 1 / reply["predicted_slowdown"].get<double>();
            CAPTURE(round);
            CAPTURE(speed);
            CHECK(std::abs(speed - kTruth) <= error + 1e-6);
            error = std::abs(speed - kTruth);
            const std::int64_t t = now() + 2000;
            REQUIRE(end(s, id + 1, "n1", 0, 2000, t)["ok"] == true);
            REQUIRE(end(s, id, "n1", 0, 2000, t)["ok"] == true);  // p2 has no solo run: left out
        }
        CHECK(error < 0.05);
        learned = 1 - error;

        // Noisy jobs: one that failed, one too short; neither moves the prediction.
        REQUIRE(place_job(s, 30, "n2", "p2")["ok"] == true);
        REQUIRE(place_job(s, 31, "n2", "p1")["ok"] == true);
        REQUIRE(end(s, 31, "n2", 1, 9000, now() + 9000)["ok"] == true);
        REQUIRE(place_job(s, 32, "n2", "p1")["ok"] == true);
        REQUIRE(end(s, 32, "n2", 0, 100, now() + 100)["ok"] == true);
        const json status = call(s, {{"op", "status"}})["status"];
        CHECK(status["elapsed_jobs_used"] == 3);
        CHECK(status["elapsed_refits"] == 3);
        CHECK(status["elapsed_left_out_failed"] == 1);
        CHECK(status["elapsed_left_out_too_short"] == 1);
        CHECK(status["elapsed_left_out_no_solo"] == 3);
        CHECK(status["elapsed_left_out_alone"] == 1);
        CHECK(status["elapsed_left_out_several_gpus"] == 0);
        const std::string metrics = call(s, {{"op", "metrics"}})["metrics"];
        CHECK(metrics.find("coloc_elapsed_jobs_left_out_total{reason=\"no_solo\"} 3") != std::string::npos);
        CHECK(metrics.find("coloc_elapsed_jobs_used_total 3") != std::string::npos);
        const json again = place_job(s, 33, "n2", "p1");  // beside job 30
        REQUIRE(again["ok"] == true);
        CHECK(1 / again["predicted_slowdown"].get<double>() == doctest::Approx(kTruth).epsilon(0.1));
    }
    // After a restart: what was learned is stored, and the stored ended jobs fill the window again.
    daemon::Service again(one_gpu_nodes(db));
    const json status = call(again, {{"op", "status"}})["status"];
    CHECK(status["elapsed_jobs_used"] == 3);
    REQUIRE(place_job(again, 40, "n1", "p2")["ok"] == true);
    const json reply = place_job(again, 41, "n1", "p1");
    REQUIRE(reply["ok"] == true);
    CHECK(std::abs(1 / reply["predicted_slowdown"].get<double>() - kTruth) < 0.05);
    (void)learned;
}

// --- sacct -P ----------------------------------------------------------------------------------

namespace {
replay::Trace sacct(const std::string& text) {
    replay::Trace t;
    t.source = "jobs.sacct";
    std::istringstream in(text);
    replay::read_sacct(in, t, {});
    return t;
}
constexpr const char* kHeader = "JobID|JobName|User|State|Start|End|Elapsed|NodeList|AllocTRES|Comment\n";
}  // namespace

TEST_CASE("sacct -P as history: jobs overlapping on a node share at the level the site gives") {
    const replay::Trace t = sacct(std::string(kHeader) +
                                  "1|solo|ann|COMPLETED|2024-01-01T00:00:00|2024-01-01T00:16:40|00:16:40|n1|"
                                  "gres/gpu=1|coloc-profile=p1\n"
                                  "2|a|ann|COMPLETED|2024-01-01T01:00:00|2024-01-01T01:33:20|00:33:20|n[1-2]|"
                                  "gres/gpu=2|coloc-profile=p1 other words\n"
                                  "3|b|bob|CANCELLED by 0|2024-01-01T01:10:00|2024-01-01T02:00:00|00:50:00|n2|"
                                  "gres/gpu=1|\n"
                                  "3.batch|batch|bob|CANCELLED|2024-01-01T01:10:00|2024-01-01T02:00:00|00:50:00|n2|"
                                  "|\n"
                                  "4|c|cy|COMPLETED|2024-01-01T01:40:00|2024-01-01T02:00:00|00:20:00|n1|gres/gpu=1|\n");
    CHECK(t.notes.at("no Submit field: submitted when it started") == 4);
    const std::vector<model::JobHistory> h = replay::history_from_trace(t, model::Sharing::Gpu);
    REQUIRE(h.size() == 4);
    CHECK(h[0].profile == "p1");
    CHECK(h[1].profile == "p1");
    CHECK(h[2].profile.empty());
    CHECK(h[2].state == "CANCELLED");
    CHECK(h[0].shared.empty());
    // Job 2 met job 3 on n2 from 01:10 to its end at 01:33:20; job 4 started after it ended.
    REQUIRE(h[1].shared.size() == 1);
    CHECK(h[1].shared[0].other == 3);
    CHECK(h[1].shared[0].where == model::Sharing::Gpu);
    CHECK(h[1].shared[0].end - h[1].shared[0].start == 1400);
    CHECK(h[3].shared.empty());

    const std::vector<model::EndedRun> runs = model::runs_from_history(h);
    CHECK(runs[1].solo_s == 1000);  // the solo run of p1
    CHECK(runs[1].intervals.size() == 2);
    CHECK(runs[2].state == "CANCELLED");
}

TEST_CASE("sacct -P as history: a bad line names its line and reason") {
    // The reason, without the hint on --skip-bad the readers add.
    auto error_of = [](const std::string& text) -> std::string {
        try {
            replay::history_from_trace(sacct(text), model::Sharing::Node);
        } catch (const std::exception& e) {
            const std::string what = e.what();
            return what.substr(0, what.find(" (--skip-bad"));
        }
        return "";
    };
    const std::string good = "1|a|ann|COMPLETED|2024-01-01T00:00:00|2024-01-01T00:10:00|00:10:00|n1|gres/gpu=1|\n";
    CHECK(error_of(kHeader + good) == "");
    CHECK(error_of(kHeader + good + "2|a|ann|COMPLETED|yesterday|2024-01-01T00:10:00|00:10:00|n1|gres/gpu=1|\n") ==
          "jobs.sacct:3: Start 'yesterday' is not a time");
    CHECK(error_of(kHeader + good + "2|a|ann|COMPLETED|2024-01-01T00:00:00\n") ==
          "jobs.sacct:3: 5 fields where the header has 10");
    CHECK(error_of(std::string(kHeader) + "x|a|ann|COMPLETED|2024-01-01T00:00:00|2024-01-01T00:10:00|00:10:00|n1|"
                                          "gres/gpu=1|\n") == "jobs.sacct:2: JobID 'x' is not a job number");
    CHECK(error_of(kHeader + good +
                   "2|a|ann|COMPLETED|2024-01-01T00:00:00|2024-01-01T00:10:00|00:10:00|n[1-|"
                   "gres/gpu=1|\n") == "jobs.sacct:3: NodeList 'n[1-' is not a hostlist");
    CHECK(error_of("JobID|JobName|Elapsed|AllocTRES\n") ==
          "jobs.sacct:1: the header has neither Submit nor Start field");
}
