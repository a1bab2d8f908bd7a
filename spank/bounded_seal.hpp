// The munge credential of a request, made within a deadline and without a fork. libmunge has no
// timeout of its own to set (a frozen munged costs seconds of its retries), so the credential is
// made on a thread of its own that the caller waits for no longer than it is told; a thread that
// is still waiting on munged then is left to finish alone, holding only what it owns, and the
// plugin's code stays mapped for it (the shared object is pinned: slurmstepd may unload plugins
// before it exits).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace coloc::spank {

// proto::seal_request within `timeout_ms`. Throws proto::ProtoError: `unavailable` when munged
// did not answer in time, `internal` when it refused (as seal_request does).
std::string seal_within(const nlohmann::json& body, const std::string& munge_socket, int timeout_ms);

}  // namespace coloc::spank
