// Phase slots: colocd's place reply carries an offset that interleaves a multi-node job's
// communication bursts with those of the jobs on its links (daemon/service/phase_slots.cpp).
#include <doctest/doctest.h>

#include <fstream>

#include "daemon/log.hpp"
#include "daemon/service/service.hpp"
#include "model/defaults.hpp"
#include "model/phase_offset.hpp"
#include "proto/envelope.hpp"
#include "proto/messages.hpp"
#include "tests/unit/test_env.hpp"

using namespace coloc;
using namespace coloc::daemon;
using proto::json;

namespace {

const bool quiet = (set_log_level(LogLevel::Error), true);

Config two_leaf_config(const std::string& db) {
    Config c = parse_config(R"(listen: [ "ipc:///tmp/unused.sock" ]
partitions:
  bind: { mode: bind }
node_types:
  quad: { gpus: 4, slots_per_gpu: 2 }
nodes:
  - { names: "n[1-4]", type: quad, link: leaf1 }
  - { names: "n[5-6]", type: quad, link: leaf2 }
)",
                            "test.yaml");
    c.database = db;
    c.munge_socket = test::munge_socket();
    // A two-node job that spends a third of each half-second iteration communicating.
    c.profiles = test::scratch("phase-slots.yaml");
    std::ofstream(c.profiles) << "profiles:\n  - { name: talker, gpus: 1, nodes: 2, iter_time_s: 0.5, "
                                 "comm_fraction: 0.3 }\n";
    return c;
}

json place_job_on(Service& s, std::int64_t job, std::vector<std::string> nodes, const std::string& profile) {
    proto::PlaceRequest r;
    r.job_id = job;
    r.job_uid = 1000;
    r.node = nodes.front();
    r.partition = "bind";
    r.slots = 1;
    r.profile = profile;
    r.job_nodes = std::move(nodes);
    return json::parse(s.handle(proto::seal_request(r.to_json(), test::munge_socket())));
}

}  // namespace

TEST_CASE("phase slots: a second multi-node job on the same link gets a slot that interleaves its bursts") {
    Service s(two_leaf_config(test::scratch("phase-slots.db")));
    const json first = place_job_on(s, 1, {"n1", "n2"}, "talker");
    REQUIRE(first["ok"] == true);
    REQUIRE(first.contains("phase_offset_s"));
    CHECK(first["phase_offset_s"].get<double>() == 0.0);  // alone on the link: any slot
    const double period = first["phase_period_s"].get<double>();
    CHECK(period > 0);

    const json second = place_job_on(s, 2, {"n3", "n4"}, "talker");
    REQUIRE(second["ok"] == true);
    const auto reply = proto::PlaceReply::from_json(second);
    REQUIRE(reply.phase_offset_s);
    const model::Burst burst = model::link_burst(*s.cluster().find(1)->profile);
    const model::PhasedBurst one[] = {{burst, 0.0}};
    CHECK(model::phased_extra(burst, *reply.phase_offset_s, one) < model::extra_in_step(burst, burst));

    // A later step of the same job is told the same slot.
    const json again = place_job_on(s, 2, {"n3", "n4"}, "talker");
    CHECK(again["phase_offset_s"] == second["phase_offset_s"]);
}

TEST_CASE("phase slots: single-node jobs and jobs on other links get none, or one of their own") {
    Service s(two_leaf_config(test::scratch("phase-slots-other.db")));
    REQUIRE(place_job_on(s, 1, {"n1", "n2"}, "talker")["ok"] == true);
    const json single = place_job_on(s, 2, {"n3"}, "");
    REQUIRE(single["ok"] == true);
    CHECK_FALSE(single.contains("phase_offset_s"));
    const json other_leaf = place_job_on(s, 3, {"n5", "n6"}, "talker");
    REQUIRE(other_leaf["ok"] == true);
    CHECK(other_leaf["phase_offset_s"].get<double>() == 0.0);  // nobody on leaf2 yet
}

TEST_CASE("place reply: the phase slot travels only when set") {
    proto::PlaceReply r;
    CHECK_FALSE(r.to_json().contains("phase_offset_s"));
    r.phase_offset_s = 0.125;
    r.phase_period_s = 0.5;
    const auto back = proto::PlaceReply::from_json(r.to_json());
    REQUIRE(back.phase_offset_s);
    CHECK(*back.phase_offset_s == 0.125);
    CHECK(*back.phase_period_s == 0.5);
}
