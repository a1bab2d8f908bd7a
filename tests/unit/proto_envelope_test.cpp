#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "proto/auth.hpp"
#include "proto/envelope.hpp"
#include "proto/errors.hpp"
#include "proto/messages.hpp"
#include "tests/unit/test_env.hpp"

using namespace coloc::proto;
using coloc::test::munge_socket;

namespace {

std::string code_of(auto&& fn) {
    try {
        fn();
    } catch (const ProtoError& e) {
        return e.code();
    }
    return "no error";
}

}  // namespace

TEST_CASE("a sealed request opens with its op, body and a credential that verifies") {
    std::string wire = seal_request({{"op", "status"}, {"x", 1.5}}, munge_socket());
    Request req = open_request(wire);
    CHECK(req.op == "status");
    CHECK(req.body["x"] == 1.5);
    CHECK(req.body["v"] == kVersion);
    CHECK_FALSE(req.body.contains("cred"));
    Identity who = verify_credential(req.cred, req.canonical, munge_socket(), 300);
    CHECK(who.uid == getuid());
    CHECK(who.encoded_at > 0);
}

TEST_CASE("credential rejections: invalid, replayed, mismatched, expired") {
    std::string wire = seal_request({{"op", "status"}}, munge_socket());
    Request req = open_request(wire);

    CHECK(code_of([&] { verify_credential("MUNGE:garbage:", req.canonical, munge_socket(), 0); }) ==
          code::kAuthInvalid);
    CHECK(code_of([&] { verify_credential("", req.canonical, munge_socket(), 0); }) == code::kAuthInvalid);

    // The credential belongs to this body; lifted onto another it is refused.
    json other = req.body;
    other["op"] = "jobs";
    CHECK(code_of([&] { verify_credential(req.cred, other.dump(), munge_socket(), 0); }) == code::kAuthMismatch);

    // Once used, a credential cannot be used again.
    std::string fresh = open_request(seal_request({{"op", "nodes"}}, munge_socket())).cred;
    Request again = open_request(seal_request({{"op", "nodes"}}, munge_socket()));
    verify_credential(again.cred, again.canonical, munge_socket(), 0);
    CHECK(code_of([&] { verify_credential(again.cred, again.canonical, munge_socket(), 0); }) == code::kAuthReplayed);
    (void)fresh;

    // A credential made to live one second is refused once that second has passed.
    json body = {{"op", "status"}, {"v", kVersion}};
    std::string cred = make_credential(body.dump(), munge_socket(), 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(2200));
    CHECK(code_of([&] { verify_credential(cred, body.dump(), munge_socket(), 0); }) == code::kAuthExpired);
}

TEST_CASE("a credential covers the request's bytes as sent, not how JSON would write them again") {
    // Spaces, key order and number forms nlohmann::json would write differently.
    const std::string body = R"({ "x" : 1.50, "op":"status",  "v":1 })";
    REQUIRE(json::parse(body).dump() != body);
    const std::string wire = with_credential(body, make_credential(body, munge_socket()));
    CHECK(wire.starts_with(R"({ "x" : 1.50, "op":"status",  "v":1 ,"cred":"MUNGE:)"));
    Request req = open_request(wire);
    CHECK(req.canonical == body);
    CHECK(req.body == json::parse(body));
    CHECK(verify_credential(req.cred, req.canonical, munge_socket(), 300).uid == getuid());

    // One byte of the body changed, even to JSON that means the same, and a fresh credential (munged
    // refuses a used one before the digest is looked at) is refused.
    const std::pair<const char*, const char*> edits[] = {{"1.50", "1.51"}, {"status", "statuz"}, {"  ", " \t"}};
    for (const auto& [from, to] : edits) {
        std::string forged = with_credential(body, make_credential(body, munge_socket()));
        forged.replace(forged.find(from), std::string(from).size(), to);
        CAPTURE(forged);
        Request f = open_request(forged);
        CHECK(code_of([&] { verify_credential(f.cred, f.canonical, munge_socket(), 0); }) == code::kAuthMismatch);
    }
    // The same for the requests this side seals, whatever the body holds.
    std::string sealed = seal_request({{"op", "place"}, {"job_name", R"(a,"cred":"x"})"}}, munge_socket());
    sealed[sealed.find("place") + 1] = 'h';
    Request f = open_request(sealed);
    CHECK(f.op == "phace");
    CHECK(code_of([&] { verify_credential(f.cred, f.canonical, munge_socket(), 0); }) == code::kAuthMismatch);
    const Request good =
        open_request(seal_request({{"op", "place"}, {"job_name", R"(a,"cred":"x"})"}}, munge_socket()));
    CHECK(good.body["job_name"] == R"(a,"cred":"x"})");
    CHECK_NOTHROW(verify_credential(good.cred, good.canonical, munge_socket(), 0));

    // A request with its credential elsewhere (older senders) is checked against the body as
    // nlohmann::json writes it.
    json legacy = {{"op", "status"}, {"v", kVersion}};
    legacy["cred"] = make_credential(legacy.dump(), munge_socket());
    Request old = open_request(legacy.dump());
    CHECK_NOTHROW(verify_credential(old.cred, old.canonical, munge_socket(), 0));
}

TEST_CASE("malformed envelopes are refused with a code naming the problem") {
    CHECK(code_of([] { open_request("{not json"); }) == code::kBadJson);
    CHECK(code_of([] { open_request("[1,2]"); }) == code::kBadJson);
    CHECK(code_of([] { open_request(R"({"op":"status"})"); }) == code::kBadVersion);
    CHECK(code_of([] { open_request(R"({"v":3,"op":"status"})"); }) == code::kBadVersion);
    CHECK(code_of([] { open_request(R"({"v":0,"op":"status"})"); }) == code::kBadVersion);
    CHECK(code_of([] { open_request(R"({"v":"1","op":"status"})"); }) == code::kBadVersion);
    CHECK(code_of([] { open_request(R"({"v":1})"); }) == code::kBadField);
    CHECK(code_of([] { open_request(R"({"v":1,"op":7})"); }) == code::kBadField);
    CHECK(code_of([] { open_request(R"({"v":1,"op":"status","cred":5})"); }) == code::kAuthInvalid);
    std::string big = R"({"v":1,"op":"status","pad":")" + std::string(kMaxMessage, 'x') + "\"}";
    CHECK(code_of([&] { open_request(big); }) == code::kTooLarge);
}

TEST_CASE("replies: ok and error round trip, garbage is refused") {
    json ok = open_reply(ok_reply({{"gpus", {1, 2}}}));
    CHECK(ok["gpus"] == json({1, 2}));
    CHECK(code_of([] { open_reply(error_reply(code::kForbidden, "no")); }) == code::kForbidden);
    CHECK(code_of([] { open_reply("garbage"); }) == code::kBadJson);
    CHECK(code_of([] { open_reply(R"({"v":1})"); }) == code::kBadJson);
    CHECK(code_of([] { open_reply(R"({"v":9,"ok":true})"); }) == code::kBadVersion);
    // An admin's listing may be far larger than any request may be.
    json many = json::array();
    for (int i = 0; i < 4000; ++i) many.push_back({{"job_id", i}, {"node", "n1"}, {"gpus", {0, 1}}});
    const std::string listing = ok_reply({{"jobs", many}});
    REQUIRE(listing.size() > kMaxMessage);
    CHECK(open_reply(listing)["jobs"].size() == 4000);
}

TEST_CASE("modes: each name and back; auto is no mode, on the wire too") {
    for (GpuMode m : {GpuMode::Bind, GpuMode::Narrow, GpuMode::Observe}) {
        CAPTURE(mode_name(m));
        CHECK(parse_mode(mode_name(m)) == m);
        PlaceReply reply;
        reply.mode = m;
        CHECK(PlaceReply::from_json(reply.to_json()).mode == m);
        PlaceRequest req;
        req.job_id = 1;
        req.node = "n1";
        req.mode = m;
        CHECK(PlaceRequest::from_json(req.to_json()).mode == m);
    }
    CHECK(std::string(mode_name(GpuMode::Bind)) == "bind");
    CHECK(std::string(mode_name(GpuMode::Narrow)) == "narrow");
    CHECK(std::string(mode_name(GpuMode::Observe)) == "observe");
    CHECK(std::string(mode_name(std::optional<GpuMode>())) == "auto");
    CHECK_FALSE(parse_mode("auto").has_value());
    CHECK_FALSE(parse_mode("Bind").has_value());
    CHECK_FALSE(parse_mode("").has_value());
    PlaceRequest automatic;
    automatic.job_id = 1;
    automatic.node = "n1";
    CHECK(automatic.to_json()["mode"] == "auto");
    CHECK_FALSE(PlaceRequest::from_json(automatic.to_json()).mode.has_value());
    json no_mode = automatic.to_json();
    no_mode.erase("mode");
    CHECK_FALSE(PlaceRequest::from_json(no_mode).mode.has_value());
    json auto_reply = PlaceReply{}.to_json();
    auto_reply["mode"] = "auto";  // colocd always decides: a reply names a mode
    CHECK_THROWS_AS(PlaceReply::from_json(auto_reply), ProtoError);
}

TEST_CASE("place request: round trip and every field validated") {
    PlaceRequest r;
    r.job_id = 42;
    r.job_uid = 1000;
    r.node = "n1";
    r.partition = "bind";
    r.mode = GpuMode::Bind;
    r.slots = 2;
    r.slurm_gpus = {0, 3};
    r.job_nodes = {"n1", "n2"};
    r.unreported = {{41, {1}, 1700000000}};
    PlaceRequest back = PlaceRequest::from_json(r.to_json());
    CHECK(back.job_id == 42);
    CHECK(back.job_uid == 1000);
    CHECK(back.slots == 2);
    CHECK(back.slurm_gpus == std::vector<int>{0, 3});
    CHECK(back.job_nodes == std::vector<std::string>{"n1", "n2"});
    CHECK(back.mode == GpuMode::Bind);
    REQUIRE(back.unreported.size() == 1);
    CHECK(back.unreported[0].gpus == std::vector<int>{1});

    auto bad = [&](const char* key, json value) {
        json j = r.to_json();
        j[key] = value;
        try {
            PlaceRequest::from_json(j);
        } catch (const ProtoError& e) {
            CHECK(e.code() == code::kBadField);
            CHECK(std::string(e.what()).find(key) != std::string::npos);
            return;
        }
        FAIL("accepted bad '" << key << "': " << value.dump());
    };
    bad("job_id", 0);
    bad("job_id", -5);
    bad("job_id", "42");
    bad("job_id", 1.5);
    bad("job_id", 1LL << 40);
    bad("node", 5);
    bad("node", "");
    bad("node", std::string(100, 'n'));
    bad("mode", "sideways");
    bad("slots", -1);
    bad("slurm_gpus", "0,1");
    bad("slurm_gpus", json::array({0, -1}));
    bad("slurm_gpus", json::array({"0"}));
    bad("job_nodes", json::array({1}));
    bad("unreported", json::object());
    bad("unreported", json::array({{{"job_id", "x"}}}));
    json missing = r.to_json();
    missing.erase("node");
    CHECK(code_of([&] { PlaceRequest::from_json(missing); }) == code::kBadField);
}

TEST_CASE("started, ended and reply messages round trip") {
    StartedReport s{7, 1000, "n2", 12, {0}, 1700000000};
    StartedReport s2 = StartedReport::from_json(s.to_json());
    CHECK(s2.decision == 12);
    CHECK(s2.gpus == std::vector<int>{0});
    EndedReport e{7, "n2", 3, 12.5, 1700000100};
    EndedReport e2 = EndedReport::from_json(e.to_json());
    CHECK(e2.exit_status == 3);
    CHECK(e2.elapsed_s == doctest::Approx(12.5));
    json be = e.to_json();
    be["elapsed_s"] = -1;
    CHECK(code_of([&] { EndedReport::from_json(be); }) == code::kBadField);
    PlaceReply p{.decision = 9,
                 .mode = GpuMode::Bind,
                 .gpus = {2, 3},
                 .predicted_slowdown = 1.25,
                 .reused = true,
                 .durability = "queued"};
    PlaceReply p2 = PlaceReply::from_json(p.to_json());
    CHECK(p2.decision == 9);
    CHECK(p2.gpus == std::vector<int>{2, 3});
    CHECK(p2.reused);
    CHECK(p2.durability == "queued");
    json older = p.to_json();  // an older colocd says nothing of durability
    older.erase("durability");
    CHECK(PlaceReply::from_json(older).durability.empty());
    older["durability"] = "maybe";
    CHECK(code_of([&] { PlaceReply::from_json(older); }) == code::kBadField);
}

TEST_CASE("GPU lists as CUDA_VISIBLE_DEVICES writes them") {
    CHECK(gpu_list({0, 2, 3}) == "0,2,3");
    CHECK(gpu_list({}) == "");
    CHECK(parse_gpu_list("0,2,3") == std::vector<int>{0, 2, 3});
    CHECK(parse_gpu_list("").empty());
    CHECK(code_of([] { parse_gpu_list("0,,1"); }) == code::kBadField);
    CHECK(code_of([] { parse_gpu_list("GPU-abc"); }) == code::kBadField);
    CHECK(code_of([] { parse_gpu_list("1,"); }) == code::kBadField);
}
