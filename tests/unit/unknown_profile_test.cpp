// An unknown --coloc-profile: placed as the default, the reply says so (the plugin tells the
// user), and colocctl shows "default (unknown: NAME)"; measured slowdowns beside predicted.
#include <doctest/doctest.h>

#include "daemon/log.hpp"
#include "daemon/service/service.hpp"
#include "proto/envelope.hpp"
#include "proto/jobs.hpp"
#include "proto/messages.hpp"
#include "tests/unit/test_env.hpp"

using namespace coloc;
using namespace coloc::daemon;
using proto::json;

namespace {

const bool quiet = (set_log_level(LogLevel::Error), true);

Config one_node(const std::string& db) {
    Config c = parse_config(R"(listen: [ "ipc:///tmp/unused.sock" ]
partitions: { bind: { mode: bind } }
node_types: { quad: { gpus: 4, slots_per_gpu: 2, gpu_type: v100, gpu_memory_gb: 32 } }
nodes: [ { names: n1, type: quad } ]
)",
                            "test.yaml");
    c.database = db;
    c.munge_socket = test::munge_socket();
    return c;
}

json call(Service& s, json body) {
    return json::parse(s.handle(proto::seal_request(std::move(body), test::munge_socket())));
}

json place_as(Service& s, std::int64_t job, const std::string& profile) {
    proto::PlaceRequest r;
    r.job_id = job;
    r.job_uid = 1000;
    r.node = "n1";
    r.partition = "bind";
    r.slots = 1;
    r.profile = profile;
    r.job_nodes = {"n1"};
    return call(s, r.to_json());
}

proto::JobRecord job_of(Service& s, std::int64_t id) {
    const json reply = call(s, {{"op", "jobs"}});
    for (const json& j : reply["jobs"])
        if (j["job_id"] == id) return proto::JobRecord::from_json(j);
    FAIL("job " << id << " not listed: " << reply.dump());
    return {};
}

}  // namespace

TEST_CASE("unknown profile: placed as the default, said in the reply, shown as default (unknown: NAME)") {
    (void)quiet;
    Service s(one_node(test::scratch("unknown-profile.db")));
    const json r = place_as(s, 1, "bert-larg");
    REQUIRE(r["ok"] == true);
    CHECK(r["profile_unknown"] == true);
    CHECK(proto::PlaceReply::from_json(r).profile_unknown);
    CHECK(s.cluster().find(1)->profile->name == "default");

    const json known = place_as(s, 2, "default");
    CHECK_FALSE(known.contains("profile_unknown"));
    CHECK_FALSE(place_as(s, 3, "").contains("profile_unknown"));

    const proto::JobRecord j = job_of(s, 1);
    CHECK(j.profile == "bert-larg");  // the name as typed is kept
    CHECK(j.profile_unknown);
    CHECK(j.profile_shown() == "default (unknown: bert-larg)");
    CHECK(job_of(s, 2).profile_shown() == "default");
    CHECK(job_of(s, 3).profile_shown() == "default");

    const json explain = call(s, {{"op", "explain"}, {"job_id", 1}});
    CHECK(explain["explain"][0]["profile"] == "default (unknown: bert-larg)");
}

TEST_CASE("measured slowdown: jobs, history and explain show the latest observation beside the prediction") {
    Service s(one_node(test::scratch("measured.db")));
    REQUIRE(place_as(s, 1, "default")["ok"] == true);
    CHECK_FALSE(job_of(s, 1).measured_slowdown);
    const double solo = s.cluster().find(1)->profile->iter_time_s;
    REQUIRE(call(s, {{"op", "observe"}, {"job_id", 1}, {"iter_time_s", solo * 1.5}})["ok"] == true);
    REQUIRE(call(s, {{"op", "observe"}, {"job_id", 1}, {"iter_time_s", solo * 1.25}})["ok"] == true);
    const proto::JobRecord j = job_of(s, 1);
    REQUIRE(j.measured_slowdown);
    CHECK(*j.measured_slowdown == doctest::Approx(1.25));
    REQUIRE(!j.placements.empty());
    const json history = call(s, {{"op", "history"}, {"job_id", 1}});
    CHECK(history["history"][0]["measured_slowdown"].get<double>() == doctest::Approx(1.25));
    const json explain = call(s, {{"op", "explain"}, {"job_id", 1}});
    CHECK(explain["explain"][0]["measured_slowdown"].get<double>() == doctest::Approx(1.25));
}

TEST_CASE("job records carry profile_unknown and measured_slowdown, and read older ones without") {
    proto::JobRecord r;
    r.profile = "x";
    r.profile_unknown = true;
    r.measured_slowdown = 1.5;
    const proto::JobRecord back = proto::JobRecord::from_json(r.to_json());
    CHECK(back.profile_unknown);
    CHECK(*back.measured_slowdown == 1.5);
    const proto::JobRecord old = proto::JobRecord::from_json(json{{"job_id", 1}, {"profile", "x"}});
    CHECK_FALSE(old.profile_unknown);
    CHECK_FALSE(old.measured_slowdown);
    CHECK(old.profile_shown() == "x");
}
