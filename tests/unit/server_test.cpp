#include <doctest/doctest.h>

#include <zmq.h>
#include <atomic>
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

namespace {

// Sends raw bytes as a REQ peer and returns the raw reply.
std::string raw_request(const std::string& endpoint, const std::string& bytes) {
    void* ctx = zmq_ctx_new();
    void* sock = zmq_socket(ctx, ZMQ_REQ);
    int linger = 0, timeout = 5000;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(sock, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    zmq_connect(sock, endpoint.c_str());
    zmq_send(sock, bytes.data(), bytes.size(), 0);
    char buf[65536];
    int n = zmq_recv(sock, buf, sizeof buf, 0);
    zmq_close(sock);
    zmq_ctx_term(ctx);
    return n < 0 ? std::string() : std::string(buf, static_cast<std::size_t>(std::min<int>(n, sizeof buf)));
}

}  // namespace

TEST_CASE("server: requests over ZeroMQ with munge, forged and missing credentials refused") {
    RunningServer s(test::one_node_config("server.db"));
    json status = proto::call(s.endpoint, {{"op", "status"}}, {test::munge_socket(), 5000});
    CHECK(status["status"]["nodes"] == 1);

    json place = {{"v", 1}, {"op", "place"}, {"job_id", 1}, {"node", "n1"}, {"slots", 1}, {"mode", "bind"}};
    json missing = json::parse(raw_request(s.endpoint, place.dump()));
    CHECK(missing["error"]["code"] == "auth_missing");
    place["cred"] = "MUNGE:forged";
    json forged = json::parse(raw_request(s.endpoint, place.dump()));
    CHECK(forged["error"]["code"] == "auth_invalid");
    json garbage = json::parse(raw_request(s.endpoint, "\x01\x02 not json"));
    CHECK(garbage["error"]["code"] == "bad_json");
    CHECK(s.service.cluster().job_count() == 0);  // nothing changed

    json ok = proto::call(s.endpoint, {{"op", "place"}, {"job_id", 1}, {"node", "n1"}, {"slots", 1}, {"mode", "bind"}},
                          {test::munge_socket(), 5000});
    CHECK(ok["gpus"].size() == 1);
    CHECK(s.service.cluster().job_count() == 1);
}

TEST_CASE("client: no answer within the deadline is 'unavailable', in about the deadline") {
    std::string nowhere = "ipc://" + test::scratch("nobody.sock");
    auto t0 = std::chrono::steady_clock::now();
    try {
        proto::call(nowhere, {{"op", "status"}}, {test::munge_socket(), 100});
        FAIL("a call to nobody returned");
    } catch (const proto::ProtoError& e) {
        CHECK(e.code() == proto::code::kUnavailable);
    }
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    CHECK(ms >= 90);
    CHECK(ms < 1000);
}
