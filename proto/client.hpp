// ZeroMQ REQ client of colocd: one request, one reply, within a hard deadline. Used by the SPANK
// plugin (where a hang would delay a job launch), colocctl, the job-side reporter, the tests'
// tools and the benchmarks. Each Connection makes and destroys its own ZeroMQ context, because
// contexts are not fork-safe and slurmstepd forks.
//
// With colocd's public key (proto/curve.hpp), the connection is CURVE: the server must prove it
// holds colocd's secret key in the handshake, before a byte of any request leaves, and every
// byte after is encrypted and authenticated. Every reply must echo its request's nonce
// (proto/envelope.hpp).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace coloc::proto {

struct CallOptions {
    std::string munge_socket;    // empty = munge's default socket
    int timeout_ms = 250;        // the whole call: credential, send, wait for the reply
    double* munge_ms = nullptr;  // when set: how long making the credential took
    std::string server_key{};    // colocd's public key (Z85); empty = no CURVE, replies unauthenticated
};

// One REQ socket to `endpoint`, kept open for several round trips (a benchmark's busy client),
// or used once. After a failed round trip it must not be used again (REQ's state machine).
class Connection {
public:
    // Throws ProtoError(unavailable) when the socket cannot be made or connected.
    explicit Connection(const std::string& endpoint, const std::string& server_key = "");
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    // Sends `wire` and returns the reply's bytes, within `timeout_ms` (< 0: no limit). Throws
    // ProtoError(unavailable) naming the endpoint and the reason: no reply in time, the transport
    // failed, or (with a server key) the server failed the CURVE handshake, so nothing was sent.
    std::string round_trip(const std::string& wire, int timeout_ms = -1);

private:
    void close();
    [[noreturn]] void refuse_handshake();
    std::string endpoint_;
    void* ctx_ = nullptr;
    void* sock_ = nullptr;
    void* monitor_ = nullptr;  // the handshake's failures, with a server key
};

// Sends `body` (which names its "op") to `endpoint` and returns the reply object.
// Throws ProtoError: `unavailable` when no reply came in time or the transport failed, the
// server's error code when it refused the request, bad_json/bad_version for a garbled reply,
// reply_mismatch for a reply to another request.
nlohmann::json call(const std::string& endpoint, const nlohmann::json& body, const CallOptions& options);

// The same with the request already sealed (proto/envelope.hpp): only the ZeroMQ exchange,
// bounded by options.timeout_ms, and the reply's checks.
nlohmann::json call_sealed(const std::string& endpoint, const std::string& wire, const CallOptions& options);

}  // namespace coloc::proto
