// colocd's route table: every op has one route and a role, and the role is checked in one place
// (Service::dispatch through Access::require) with the refusals the handlers used to write.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>

#include "daemon/service/access.hpp"
#include "daemon/service/service.hpp"
#include "model/baseline.hpp"
#include "model/coloc_model.hpp"
#include "proto/errors.hpp"
#include "proto/ops.hpp"

using namespace coloc;
using namespace coloc::daemon;
using proto::json;
using proto::Op;

namespace {

const Service::Route& route_of(Op op) {
    for (const Service::Route& r : Service::routes())
        if (r.op == op) return r;
    FAIL("no route for " << proto::op_name(op));
    throw std::logic_error("unreachable");
}

// The refusal `uid` gets for `role`, empty when allowed.
std::string refusal(const Access& access, Role role, uid_t uid, const std::string& action) {
    try {
        access.require(role, uid, action);
        return "";
    } catch (const proto::ProtoError& e) {
        CHECK(e.code() == proto::code::kForbidden);
        return e.what();
    }
}

}  // namespace

TEST_CASE("ops: every op has a name both ends read back, and one route with a role") {
    std::set<std::string> names;
    for (const auto& [op, name] : proto::kOpNames) {
        CHECK(names.insert(name).second);
        CHECK(proto::op_from_name(name) == op);
        CHECK(std::string(proto::op_name(op)) == name);
        int routes = 0;
        for (const Service::Route& r : Service::routes()) routes += r.op == op;
        CHECK_MESSAGE(routes == 1, name);
    }
    CHECK(Service::routes().size() == proto::kOpNames.size());
    CHECK_FALSE(proto::op_from_name("frobnicate"));
    CHECK_FALSE(proto::op_from_name(""));
    for (const Service::Route& r : Service::routes()) {
        CHECK((r.handler != nullptr));
        // A route that can refuse says what the sender may not do.
        if (r.role != Role::User || r.admin_field) CHECK(std::string(r.action) != "");
    }
}

TEST_CASE("ops: the roles are those the handlers checked before") {
    for (Op op : {Op::Place, Op::Started, Op::Ended}) {
        CHECK(route_of(op).role == Role::Reporter);
        CHECK(std::string(route_of(op).action) == "report placements");
    }
    for (Op op : {Op::Status, Op::Nodes, Op::Jobs, Op::History, Op::Explain, Op::Observe, Op::Metrics})
        CHECK(Service::role_for(route_of(op), {{"op", proto::op_name(op)}, {"enabled", true}}) == Role::User);
    const Service::Route& steering = route_of(Op::Steering);
    CHECK(Service::role_for(steering, {{"op", "steering"}}) == Role::User);
    CHECK(Service::role_for(steering, {{"op", "steering"}, {"enabled", false}}) == Role::Admin);
    CHECK(Service::role_for(steering, {{"op", "steering"}, {"enabled", true}}) == Role::Admin);
}

TEST_CASE("ops: a plain user is refused reporter and admin ops with the same messages as before") {
    const Access access({}, "root");
    const uid_t user = 4242;
    CHECK(refusal(access, Role::User, user, "") == "");
    CHECK(refusal(access, Role::Reporter, user, route_of(Op::Place).action) ==
          "only slurmstepd (root or SlurmUser) may report placements; uid 4242 may not");
    CHECK(refusal(access, Role::Admin, user, route_of(Op::Steering).action) ==
          "only colocd's admins may switch node steering; uid 4242 may not");
    CHECK(refusal(access, Role::Reporter, 0, "report placements") == "");
    CHECK(refusal(access, Role::Admin, 0, "switch node steering") == "");
    CHECK(std::string(to_string(Role::Reporter)) == "reporter");
}

TEST_CASE("ops: the launch-path messages name their ops as the table does") {
    proto::PlaceRequest place;
    place.job_id = 1;
    place.node = "n1";
    CHECK(place.to_json()["op"] == proto::op_name(Op::Place));
    proto::StartedReport started;
    started.job_id = 1;
    started.node = "n1";
    CHECK(started.to_json()["op"] == proto::op_name(Op::Started));
    proto::EndedReport ended;
    ended.job_id = 1;
    ended.node = "n1";
    CHECK(ended.to_json()["op"] == proto::op_name(Op::Ended));
}

TEST_CASE("learner: the coloc model learns, the baseline does not; a saved model comes back exactly") {
    model::BaselineModel baseline;
    CHECK(baseline.learner() == nullptr);
    model::ProfileCatalogue cat;
    for (const char* n : {"a", "b"}) {
        model::JobProfile p;
        p.name = n;
        p.sm_util = n[0] == 'a' ? 0.4 : 0.7;
        p.known["sm_util"] = true;
        cat.intern(p);
    }
    model::ColocModel coloc(cat);
    model::InterferenceModel& m = coloc;
    model::Learner* learner = m.learner();
    REQUIRE(learner != nullptr);
    const model::JobProfile& a = *coloc.catalogue().find("a");
    const model::Neighbour n{coloc.catalogue().find("b"), model::Sharing::Gpu, std::nullopt};
    const double before = m.slowdown(a, std::span(&n, 1));
    const std::uint64_t version = m.version();
    const std::string params = learner->params_json().dump();
    auto saved = learner->save();
    learner->observe(a, std::span(&n, 1), before + 1.0);
    CHECK(m.slowdown(a, std::span(&n, 1)) != before);
    learner->restore(std::move(saved));
    CHECK(m.slowdown(a, std::span(&n, 1)) == before);
    CHECK(m.version() == version);
    CHECK(learner->params_json().dump() == params);
}
