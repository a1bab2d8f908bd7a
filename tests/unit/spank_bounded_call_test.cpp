// The plugin asks colocd without a fork: each part of the call must bound itself. A munged that
// takes connections and never answers, and a colocd that takes requests and never answers, each
// cost the deadline and not more.
#include <doctest/doctest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <zmq.h>
#include <chrono>

#include "proto/client.hpp"
#include "proto/envelope.hpp"
#include "proto/errors.hpp"
#include "spank/bounded_seal.hpp"
#include "spank/stage_log.hpp"
#include "tests/unit/test_env.hpp"

using namespace coloc;
using json = nlohmann::json;

namespace {

long ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
}

// A unix socket that is listened on and never accepted: what a frozen munged looks like.
struct FrozenMunged {
    std::string path = coloc::test::scratch("frozen-munge.sock");
    int fd = -1;
    FrozenMunged() {
        fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        path.copy(addr.sun_path, sizeof addr.sun_path - 1);
        REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
        REQUIRE(::listen(fd, 16) == 0);
    }
    ~FrozenMunged() {
        ::close(fd);
        ::unlink(path.c_str());
    }
};

}  // namespace

TEST_CASE("spank call: the credential is made within its deadline, or the call fails in about the deadline") {
    const json body = {{"op", "status"}};
    const std::string wire = spank::seal_within(body, test::munge_socket(), 2000);
    CHECK(proto::open_request(wire).op == "status");

    FrozenMunged frozen;
    const auto t0 = std::chrono::steady_clock::now();
    try {
        spank::seal_within(body, frozen.path, 100);
        FAIL("a credential from a frozen munged");
    } catch (const proto::ProtoError& e) {
        CHECK(e.code() == proto::code::kUnavailable);
        CHECK(std::string(e.what()) == "munged did not make a credential within 100 ms");
    }
    const long ms = ms_since(t0);
    CHECK(ms >= 90);
    CHECK(ms < 400);
}

TEST_CASE("spank call: a colocd that takes the request and never answers costs the deadline") {
    void* ctx = zmq_ctx_new();
    void* rep = zmq_socket(ctx, ZMQ_REP);
    const std::string endpoint = "ipc://" + test::scratch("silent-colocd.sock");
    REQUIRE(zmq_bind(rep, endpoint.c_str()) == 0);
    const std::string wire = proto::seal_request({{"op", "status"}}, test::munge_socket());
    const auto t0 = std::chrono::steady_clock::now();
    try {
        proto::call_sealed(endpoint, wire, {test::munge_socket(), 100});
        FAIL("an answer from a silent colocd");
    } catch (const proto::ProtoError& e) {
        CHECK(e.code() == proto::code::kUnavailable);
    }
    const long ms = ms_since(t0);
    CHECK(ms >= 90);
    CHECK(ms < 400);
    int zero = 0;
    zmq_setsockopt(rep, ZMQ_LINGER, &zero, sizeof zero);
    zmq_close(rep);
    zmq_ctx_term(ctx);
}

TEST_CASE("spank stage line: every stage by name, '-' for one that did not run, Slurm's step ids by name") {
    spank::StageTimes t;
    t.path = "colocd";
    t.lock_ms = 0.084;
    t.munge_ms = 0.5;
    t.call_ms = 2.25;
    t.record_ms = 0.1;
    t.place_ms = 3;
    t.fence_ms = 0.7;
    CHECK(spank::stage_line(12, 0xFFFFFFFBu, "n1", t, 0.35) ==
          "job=12 step=batch node=n1 path=colocd lock=0.08 lookup=- munge=0.50 call=2.25 record=0.10 place=3.00 "
          "fence=0.70 report=0.35");
    CHECK(spank::stage_line(12, 3, "n1", spank::StageTimes{}, -1) ==
          "job=12 step=3 node=n1 path=none lock=- lookup=- munge=- call=- record=- place=- fence=- report=-");
    CHECK(spank::apply_line(12, 0, "n2", 0.014) == "job=12 step=0 node=n2 apply=0.01");
}
