// Authenticated replies: colocd's CURVE key proves a reply is colocd's before a request leaves,
// and every reply must echo its request's nonce.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <zmq.h>
#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "proto/client.hpp"
#include "proto/curve.hpp"
#include "proto/envelope.hpp"
#include "proto/errors.hpp"
#include "spank/plugin_args.hpp"
#include "tests/unit/fake_router.hpp"
#include "tests/unit/running_server.hpp"
#include "tests/unit/test_env.hpp"

using namespace coloc;
using proto::json;
using test::RunningServer;

namespace {

proto::CurveKeys fresh_keys() {
    const std::string secret = test::scratch("colocd.key");
    return proto::load_or_create_server_keys(secret, proto::public_key_file_for(secret));
}

json place_body(int job) { return {{"op", "place"}, {"job_id", job}, {"node", "n1"}, {"slots", 1}, {"mode", "bind"}}; }

// A server on colocd's endpoint that is not colocd: it answers each request with `answer`.
test::FakeRouter impostor(const std::string& secret_key, test::FakeRouter::Answer answer) {
    return {"ipc://" + test::scratch("impostor.sock"), std::move(answer), secret_key};
}

std::string refusal(const std::string& endpoint, const json& body, const proto::CallOptions& options,
                    std::string& message) {
    try {
        proto::call(endpoint, body, options);
    } catch (const proto::ProtoError& e) {
        message = e.what();
        return e.code();
    }
    return "accepted";
}

}  // namespace

TEST_CASE("reply auth: a CURVE colocd's replies are accepted with its public key") {
    const proto::CurveKeys keys = fresh_keys();
    RunningServer s(test::one_node_config("reply-auth.db"), keys.secret_key);
    json status = proto::call(s.endpoint, {{"op", "status"}}, {test::munge_socket(), 5000, nullptr, keys.public_key});
    CHECK(status["status"]["nodes"] == 1);
    CHECK_FALSE(status.contains(proto::kNonce));  // the exchange's, taken out again
    json placed = proto::call(s.endpoint, place_body(1), {test::munge_socket(), 5000, nullptr, keys.public_key});
    CHECK(placed["gpus"].size() == 1);
    CHECK(s.service.cluster().job_count() == 1);
}

TEST_CASE("reply auth: a server without colocd's secret key fails the handshake and is sent nothing") {
    const proto::CurveKeys colocd = fresh_keys();
    const proto::CurveKeys other = fresh_keys();
    REQUIRE(colocd.public_key != other.public_key);
    test::FakeRouter rogue =
        impostor(other.secret_key, [](const std::string& req) { return proto::echo_nonce(req, proto::ok_reply()); });
    std::string message;
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(refusal(rogue.endpoint, place_body(2), {test::munge_socket(), 3000, nullptr, colocd.public_key}, message) ==
          proto::code::kUnavailable);
    // Refused at the handshake, not at the deadline: the plugin falls back at once.
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(2000));
    CHECK(message.find("CURVE handshake") != std::string::npos);
    CHECK(message.find(rogue.endpoint) != std::string::npos);
    CHECK(rogue.received().size() == 0);
}

TEST_CASE("reply auth: a plain server is refused when a key is configured, and sent nothing") {
    const proto::CurveKeys colocd = fresh_keys();
    test::FakeRouter rogue =
        impostor("", [](const std::string& req) { return proto::echo_nonce(req, proto::ok_reply()); });
    std::string message;
    CHECK(refusal(rogue.endpoint, place_body(3), {test::munge_socket(), 3000, nullptr, colocd.public_key}, message) ==
          proto::code::kUnavailable);
    CHECK(message.find("CURVE handshake") != std::string::npos);
    CHECK(rogue.received().size() == 0);
    // The same server is reached without a key: what the key protects against.
    CHECK(refusal(rogue.endpoint, place_body(3), {test::munge_socket(), 3000}, message) == "accepted");
    CHECK(rogue.received().size() == 1);
}

TEST_CASE("reply auth: a reply that does not echo the request's nonce is refused") {
    SUBCASE("another request's nonce") {
        test::FakeRouter other = impostor("", [](const std::string&) {
            return proto::ok_reply({{proto::kNonce, "0123456789abcdef"}});
        });
        std::string message;
        CHECK(refusal(other.endpoint, {{"op", "status"}}, {test::munge_socket(), 3000}, message) ==
              proto::code::kReplyMismatch);
        CHECK(message.find(other.endpoint) != std::string::npos);
    }
    SUBCASE("no nonce") {
        test::FakeRouter none = impostor("", [](const std::string&) { return proto::ok_reply(); });
        std::string message;
        CHECK(refusal(none.endpoint, {{"op", "status"}}, {test::munge_socket(), 3000}, message) ==
              proto::code::kReplyMismatch);
    }
}

TEST_CASE("envelope: each request gets a fresh nonce, colocd's reply echoes it, the client checks it") {
    const std::string a = proto::seal_request({{"op", "status"}}, test::munge_socket());
    const std::string b = proto::seal_request({{"op", "status"}}, test::munge_socket());
    const std::string nonce = proto::request_nonce(a);
    CHECK(nonce.size() == 32);
    CHECK(nonce != proto::request_nonce(b));
    CHECK(proto::open_request(a).body[proto::kNonce] == nonce);  // under the credential

    const std::string reply = proto::echo_nonce(a, proto::ok_reply({{"x", 1}}));
    json ok = proto::verify_reply(reply, nonce);
    CHECK(ok["x"] == 1);
    CHECK_FALSE(ok.contains(proto::kNonce));
    CHECK_THROWS_WITH_AS(proto::verify_reply(reply, proto::request_nonce(b)), doctest::Contains("another request"),
                         proto::ProtoError);
    CHECK_THROWS_AS(proto::verify_reply(proto::ok_reply(), nonce), proto::ProtoError);
    // An error reply is bound the same way, and then says its code.
    const std::string refused = proto::echo_nonce(a, proto::error_reply(proto::code::kForbidden, "no"));
    CHECK_THROWS_WITH_AS(proto::open_reply(refused, nonce), "no", proto::ProtoError);
    CHECK(proto::echo_nonce("{\"op\":\"status\"}", "{}") == "{}");  // a request without one
    CHECK(proto::echo_nonce(a, "{}") == "{\"nonce\":\"" + nonce + "\"}");
}

TEST_CASE("curve keys: made once at first start, the secret for its owner alone") {
    const std::string secret = test::scratch("colocd.key");
    const std::string pub = proto::public_key_file_for(secret);
    const proto::CurveKeys made = proto::load_or_create_server_keys(secret, pub);
    struct stat st {};
    REQUIRE(::stat(secret.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    REQUIRE(::stat(pub.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0644);
    CHECK(proto::read_key_file(pub) == made.public_key);
    const proto::CurveKeys again = proto::load_or_create_server_keys(secret, pub);
    CHECK(again.secret_key == made.secret_key);
    CHECK(again.public_key == made.public_key);

    ::chmod(secret.c_str(), 0640);
    CHECK_THROWS_WITH_AS(proto::load_or_create_server_keys(secret, pub), doctest::Contains("chmod 600"),
                         std::runtime_error);
    const std::string garbage = test::scratch("garbage.pub");
    std::ofstream(garbage) << "not a key\n";
    CHECK_THROWS_WITH_AS(proto::read_key_file(garbage), doctest::Contains(garbage.c_str()), std::runtime_error);
}

TEST_CASE("plugin args: server_key= reads colocd's key; one that cannot be read asks colocd nothing") {
    const proto::CurveKeys keys = fresh_keys();
    const std::string pub = test::scratch("given.pub");
    std::ofstream(pub) << keys.public_key << "\n";
    spank::ParsedArgs good = spank::parse_plugin_args(std::vector<std::string>{"server_key=" + pub});
    CHECK(good.errors.empty());
    CHECK(good.config.server_key == keys.public_key);
    CHECK(good.config.server_key_problem.empty());

    spank::ParsedArgs missing =
        spank::parse_plugin_args(std::vector<std::string>{"server_key=" + test::scratch("absent.pub")});
    CHECK(missing.config.server_key.empty());
    CHECK(missing.config.server_key_problem.find("colocd is not asked") != std::string::npos);

    spank::ParsedArgs relative = spank::parse_plugin_args(std::vector<std::string>{"server_key=colocd.pub"});
    CHECK(relative.errors.size() == 1);
}
