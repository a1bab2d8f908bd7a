// colocd's server against hostile clients: oversized and malformed messages are refused with a
// clear error and change nothing; one client flooding requests does not starve another.
#include <doctest/doctest.h>

#include <zmq.h>
#include <atomic>
#include <chrono>
#include <thread>

#include "daemon/server.hpp"
#include "daemon/service/service.hpp"
#include "proto/client.hpp"
#include "proto/envelope.hpp"
#include "proto/errors.hpp"
#include "tests/unit/running_server.hpp"
#include "tests/unit/test_env.hpp"

using namespace coloc;
using proto::json;
using test::RunningServer;
using Clock = std::chrono::steady_clock;

namespace {

// Sends `frames` as one (multi-part) request from a REQ peer; the reply, or "" when none came
// within `timeout_ms`.
std::string raw_request(const std::string& endpoint, const std::vector<std::string>& frames, int timeout_ms = 5000) {
    void* ctx = zmq_ctx_new();
    void* sock = zmq_socket(ctx, ZMQ_REQ);
    int linger = 0;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(sock, ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
    zmq_connect(sock, endpoint.c_str());
    for (std::size_t i = 0; i < frames.size(); ++i)
        zmq_send(sock, frames[i].data(), frames[i].size(), i + 1 < frames.size() ? ZMQ_SNDMORE : 0);
    zmq_msg_t reply;
    zmq_msg_init(&reply);
    std::string out;
    if (zmq_msg_recv(&reply, sock, 0) >= 0)
        out.assign(static_cast<const char*>(zmq_msg_data(&reply)), zmq_msg_size(&reply));
    zmq_msg_close(&reply);
    zmq_close(sock);
    zmq_ctx_term(ctx);
    return out;
}

json call(const RunningServer& s, const json& body) {
    return proto::call(s.endpoint, body, {test::munge_socket(), 5000});
}

json place_body(std::int64_t job_id) {
    return {{"op", "place"}, {"job_id", job_id}, {"node", "n1"}, {"slots", 1}, {"mode", "bind"}};
}

// What a refusal must leave as it was.
struct Snapshot {
    std::size_t running;
    std::int64_t placements;
    std::int64_t history;
    bool operator==(const Snapshot&) const = default;
};
Snapshot snapshot(const RunningServer& s) {
    json status = call(s, {{"op", "status"}})["status"];
    return {s.service.cluster().job_count(), s.service.counters().placements,
            status["jobs_in_history"].get<std::int64_t>()};
}

}  // namespace

TEST_CASE("server: oversized and malformed messages are refused with a clear error and change nothing") {
    RunningServer s(test::one_node_config("hostile.db"));
    REQUIRE(call(s, place_body(1))["gpus"].size() == 1);
    const Snapshot before = snapshot(s);

    const std::string sealed = proto::seal_request(place_body(2), test::munge_socket());
    json padded = json::parse(sealed);
    padded["job_name"] = std::string(proto::kMaxMessage, 'x');
    struct Case {
        const char* what;
        std::vector<std::string> frames;
        const char* code;
        const char* says;  // part of the message a person reads
    } cases[] = {
        {"over the size limit", {padded.dump()}, "too_large", "exceeds the limit of 65536"},
        {"not JSON", {"\x01\x02 not json"}, "bad_json", "not valid JSON"},
        {"a JSON array", {"[1,2,3]"}, "bad_json", "not a JSON object"},
        {"truncated", {sealed.substr(0, sealed.size() / 2)}, "bad_json", "not valid JSON"},
        {"no version", {R"({"op":"status"})"}, "bad_version", "field 'v'"},
        {"another version", {R"({"v":3,"op":"status"})"}, "bad_version", "not supported"},
        {"op not a string", {R"({"v":1,"op":7})"}, "bad_field", "field 'op'"},
        {"unknown op", {R"({"v":1,"op":"shutdown"})"}, "unknown_op", "unknown op 'shutdown'"},
        {"credential not a string", {R"({"v":1,"op":"place","cred":[1]})"}, "auth_invalid", "field 'cred'"},
        {"two frames", {sealed, sealed}, "bad_json", "one JSON message per request"},
        {"empty", {""}, "bad_json", "not valid JSON"},
        {"deep nesting", {std::string(30000, '[') + std::string(30000, ']')}, "bad_json", "not a JSON object"},
    };
    for (const Case& c : cases) {
        CAPTURE(c.what);
        json reply = json::parse(raw_request(s.endpoint, c.frames));
        CHECK(reply["ok"] == false);
        CHECK(reply["error"]["code"] == c.code);
        CHECK(reply["error"]["message"].get<std::string>().find(c.says) != std::string::npos);
    }

    // Fields are checked after the credential; each refusal names the field.
    json wrong_type = place_body(3);
    wrong_type["job_id"] = "three";
    json long_list = place_body(3);
    long_list["slurm_gpus"] = std::vector<int>(2000, 0);
    json long_name = place_body(3);
    long_name["node"] = std::string(1000, 'n');
    for (const json& body : {wrong_type, long_list, long_name}) {
        CAPTURE(body.dump().substr(0, 120));
        try {
            call(s, body);
            FAIL("a malformed place was accepted");
        } catch (const proto::ProtoError& e) {
            CHECK(e.code() == "bad_field");
            CHECK(std::string(e.what()).find("field '") != std::string::npos);
        }
    }

    // Far over the limit: ZeroMQ drops the message before it is read; no answer, no harm.
    CHECK(raw_request(s.endpoint, {std::string(8 * proto::kMaxMessage, 'x')}, 300).empty());

    CHECK(snapshot(s) == before);
    CHECK(s.service.counters().refused >= 14);          // the two-frame request never reaches the service
    CHECK(call(s, place_body(2))["gpus"].size() == 1);  // and it still serves
}

TEST_CASE("server: a client flooding place requests does not starve another client") {
    RunningServer s(test::one_node_config("hostile.db"));
    constexpr int kFlood = 1500;
    std::vector<std::string> flood;
    for (int i = 0; i < kFlood; ++i) flood.push_back(proto::seal_request(place_body(1000 + i), test::munge_socket()));

    // One DEALER peer sends every request without waiting for replies, and counts the replies.
    std::atomic<int> sent{0}, answered{0};
    std::thread flooder([&] {
        void* ctx = zmq_ctx_new();
        void* sock = zmq_socket(ctx, ZMQ_DEALER);
        int linger = 0, unlimited = 0;
        zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
        zmq_setsockopt(sock, ZMQ_SNDHWM, &unlimited, sizeof unlimited);
        zmq_setsockopt(sock, ZMQ_RCVHWM, &unlimited, sizeof unlimited);
        zmq_connect(sock, s.endpoint.c_str());
        const auto deadline = Clock::now() + std::chrono::seconds(60);
        while (answered < kFlood && Clock::now() < deadline) {
            zmq_pollitem_t item{sock, 0, static_cast<short>(ZMQ_POLLIN | (sent < kFlood ? ZMQ_POLLOUT : 0)), 0};
            zmq_poll(&item, 1, 100);
            while (sent < kFlood && zmq_send(sock, "", 0, ZMQ_SNDMORE | ZMQ_DONTWAIT) == 0) {
                zmq_send(sock, flood[sent].data(), flood[sent].size(), 0);
                ++sent;
            }
            zmq_msg_t part;
            zmq_msg_init(&part);
            while (zmq_msg_recv(&part, sock, ZMQ_DONTWAIT) >= 0)
                if (!zmq_msg_more(&part)) ++answered;
            zmq_msg_close(&part);
        }
        zmq_close(sock);
        zmq_ctx_term(ctx);
    });

    // Once the flood is queued, another client asks; it is answered while the flood still runs.
    const auto queued_by = Clock::now() + std::chrono::seconds(30);
    while (sent < kFlood && Clock::now() < queued_by) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    REQUIRE(sent == kFlood);
    REQUIRE(answered < kFlood / 2);  // a backlog to be starved behind
    const int answered_before = answered;
    const auto t0 = Clock::now();
    json status = call(s, {{"op", "status"}});
    const auto waited_ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
    const int answered_after = answered;
    flooder.join();

    MESSAGE("flood of " << kFlood << ": the other client waited " << waited_ms << " ms while the flooder got "
                        << answered_after - answered_before << " replies");
    CHECK(status["status"]["nodes"] == 1);
    CHECK(answered == kFlood);               // the flood itself was served in full
    CHECK(answered_after < kFlood * 3 / 4);  // not served first-come-first-served behind it
    CHECK(waited_ms < 1000);
    CHECK(s.service.counters().placements == 8);  // eight slots on n1, the rest had no capacity
}
