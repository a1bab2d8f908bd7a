// The job records of colocd's jobs and history replies: what colocd writes colocctl reads back.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "proto/jobs.hpp"

using namespace coloc::proto;

namespace {

std::set<std::string> keys(const json& j) {
    std::set<std::string> out;
    for (const auto& [k, _] : j.items()) out.insert(k);
    return out;
}

JobRecord ended_job() {
    JobRecord r;
    r.job_id = 42;
    r.uid = 1000;
    r.user = "ana";
    r.job_name = "train";
    r.partition = "gpu";
    r.profile = "resnet50-b64";
    r.state = "ended";
    r.submit = 1700000000;
    r.start = 1700000010;
    r.end = 1700000100;
    r.exit_status = 0;
    r.elapsed_s = 90.5;
    r.placements.push_back({7, "n1", "bind", {0, 1}, 1.25, "colocd", 1700000000, 1700000100});
    r.placements.push_back({8, "n2", "narrow", {3}, 1.0, "fallback", 1700000001, std::nullopt});
    return r;
}

}  // namespace

TEST_CASE("jobs: a job record keeps the keys colocd has always sent, nulls for what is unknown") {
    const json j = ended_job().to_json();
    CHECK(keys(j) == std::set<std::string>{"job_id", "uid", "user", "job_name", "partition", "profile",
                                           "profile_unknown", "measured_slowdown", "state", "submit", "start", "end",
                                           "exit_status", "elapsed_s", "time_limit_s", "work_s", "end_reason",
                                           "placements"});
    CHECK(j["measured_slowdown"].is_null());
    CHECK(j["time_limit_s"].is_null());
    CHECK(j["work_s"].is_null());
    CHECK(j["end_reason"].is_null());
    CHECK(j["elapsed_s"] == 90.5);
    CHECK(keys(j["placements"][0]) == std::set<std::string>{"decision", "node", "mode", "gpus", "predicted_slowdown",
                                                            "source", "created", "ended"});
    CHECK(j["placements"][1]["ended"].is_null());
    CHECK(j["placements"][0]["gpus"] == json::array({0, 1}));
}

TEST_CASE("jobs: what colocd writes reads back the same, colocations included") {
    JobRecord r = ended_job();
    r.end_reason = "ended while colocd was away";
    r.colocations = std::vector<ColocationRecord>{{42, 43, "n1", "gpu", 1700000020, std::nullopt},
                                                  {42, 44, "n2", "link", 1700000030, 1700000040}};
    const json j = r.to_json();
    CHECK(keys(j["colocations"][0]) == std::set<std::string>{"job_id", "other", "node", "sharing", "start", "end"});
    const JobRecord back = JobRecord::from_json(json::parse(j.dump()));
    CHECK(back.to_json() == j);
    CHECK(back.placements.size() == 2);
    CHECK(back.placements[0].ended == 1700000100);
    CHECK_FALSE(back.placements[1].ended);
    REQUIRE(back.colocations);
    CHECK(back.colocations->at(1).end == 1700000040);
    CHECK_FALSE(JobRecord::from_json(ended_job().to_json()).colocations);
}

TEST_CASE("jobs: a record with keys missing reads with defaults") {
    const JobRecord r = JobRecord::from_json({{"job_id", 5}, {"start", nullptr}, {"placements", json::array()}});
    CHECK(r.job_id == 5);
    CHECK(r.uid == -1);
    CHECK_FALSE(r.start);
    CHECK(r.placements.empty());
}
