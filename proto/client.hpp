// One request, one reply, within a hard deadline. Used by the SPANK plugin (where a hang would
// delay a job launch) and by colocctl. Each call makes and destroys its own ZeroMQ context,
// because contexts are not fork-safe and slurmstepd forks.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace coloc::proto {

struct CallOptions {
    std::string munge_socket;    // empty = munge's default socket
    int timeout_ms = 250;        // the whole call: credential, send, wait for the reply
    double* munge_ms = nullptr;  // when set: how long making the credential took
};

// Sends `body` (which names its "op") to `endpoint` and returns the reply object.
// Throws ProtoError: `unavailable` when no reply came in time or the transport failed, the
// server's error code when it refused the request, bad_json/bad_version for a garbled reply.
nlohmann::json call(const std::string& endpoint, const nlohmann::json& body, const CallOptions& options);

// The same with the request already sealed (proto/envelope.hpp): only the ZeroMQ exchange,
// bounded by options.timeout_ms (send and receive timeouts, LINGER 0, its own context).
nlohmann::json call_sealed(const std::string& endpoint, const std::string& wire, const CallOptions& options);

}  // namespace coloc::proto
