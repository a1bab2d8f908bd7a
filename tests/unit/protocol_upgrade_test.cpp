// Rolling upgrades and cluster names: colocd serves requests of the protocol version before its
// own and answers them in that version; a request naming another cluster is refused.
#include <doctest/doctest.h>

#include "daemon/log.hpp"
#include "daemon/service/service.hpp"
#include "proto/auth.hpp"
#include "proto/envelope.hpp"
#include "proto/errors.hpp"
#include "tests/unit/test_env.hpp"

using namespace coloc;
using namespace coloc::daemon;
using proto::json;

namespace {

const bool quiet = (set_log_level(LogLevel::Error), true);

Config config_of(const std::string& cluster_line) {
    Config c = parse_config(cluster_line + R"(
listen: [ "ipc:///tmp/unused.sock" ]
partitions:
  bind: { mode: bind }
node_types:
  quad: { gpus: 4, slots_per_gpu: 2 }
nodes:
  - { names: "n[1-2]", type: quad }
)",
                            "test.yaml");
    c.database = test::scratch("upgrade.db");
    c.munge_socket = test::munge_socket();
    return c;
}

// A request as a sender of protocol `version` writes it: its own "v", its credential over its bytes.
std::string request_of_version(json body, int version) {
    body["v"] = version;
    const std::string bytes = body.dump();
    return proto::with_credential(bytes, proto::make_credential(bytes, test::munge_socket()));
}

json place_body(std::int64_t job) {
    return {{"op", "place"},       {"job_id", job}, {"job_uid", 1000},    {"node", "n1"},
            {"partition", "bind"}, {"slots", 1},    {"job_nodes", {"n1"}}};
}

}  // namespace

TEST_CASE("protocol: this version and the one before open; others are refused naming both") {
    static_assert(proto::kOldestVersion == proto::kVersion - 1);
    CHECK(proto::open_request(R"({"v":1,"op":"status"})").version == 1);
    CHECK(proto::open_request(R"({"v":2,"op":"status"})").version == 2);
    try {
        proto::open_request(R"({"v":3,"op":"status"})");
        FAIL("version 3 opened");
    } catch (const proto::ProtoError& e) {
        CHECK(e.code() == proto::code::kBadVersion);
        CHECK(std::string(e.what()).find("speaks 1 to 2") != std::string::npos);
    }
    // A client of this version reads replies of either.
    CHECK(proto::open_reply(proto::ok_reply({}, proto::kOldestVersion))["ok"] == true);
}

TEST_CASE("rolling upgrade: a plugin of the previous version is placed and answered in its version") {
    Service s(config_of(""));
    const json old_reply = json::parse(s.handle(request_of_version(place_body(7), proto::kOldestVersion)));
    CHECK(old_reply["v"] == proto::kOldestVersion);
    REQUIRE(old_reply["ok"] == true);
    CHECK(old_reply["gpus"].size() == 1);
    CHECK(s.cluster().job_count() == 1);
    // Refusals too speak the sender's version, so that it reads the reason.
    const json refused = json::parse(s.handle(request_of_version({{"op", "frobnicate"}}, proto::kOldestVersion)));
    CHECK(refused["v"] == proto::kOldestVersion);
    CHECK(refused["error"]["code"] == "unknown_op");
    // An upgraded one gets this version.
    const json new_reply = json::parse(s.handle(request_of_version(place_body(8), proto::kVersion)));
    CHECK(new_reply["v"] == proto::kVersion);
    CHECK(new_reply["ok"] == true);
}

TEST_CASE("cluster names: a request naming another cluster is refused; one naming none is served") {
    Service s(config_of("cluster: alpha"));
    json other = place_body(1);
    other["cluster"] = "beta";
    const json refused = json::parse(s.handle(request_of_version(other, proto::kVersion)));
    CHECK(refused["error"]["code"] == proto::code::kWrongCluster);
    const std::string why = refused["error"]["message"];
    CHECK(why.find("'alpha'") != std::string::npos);
    CHECK(why.find("'beta'") != std::string::npos);
    CHECK(s.cluster().job_count() == 0);

    json same = place_body(2);
    same["cluster"] = "alpha";
    CHECK(json::parse(s.handle(request_of_version(same, proto::kVersion)))["ok"] == true);
    CHECK(json::parse(s.handle(request_of_version(place_body(3), proto::kOldestVersion)))["ok"] == true);
    json status = json::parse(s.handle(request_of_version({{"op", "status"}}, proto::kVersion)));
    CHECK(status["status"]["cluster"] == "alpha");

    json not_a_name = place_body(4);
    not_a_name["cluster"] = 5;
    CHECK(json::parse(s.handle(request_of_version(not_a_name, proto::kVersion)))["error"]["code"] == "bad_field");

    // A colocd without a name serves whoever asks.
    Service unnamed(config_of(""));
    CHECK(json::parse(unnamed.handle(request_of_version(other, proto::kVersion)))["ok"] == true);
}
