// munge credentials bound to the request body: the credential's payload is a digest of the
// body, so a credential cannot be lifted onto another request, and munged's replay cache and
// time-to-live refuse reuse and stale credentials.
#pragma once

#include <sys/types.h>
#include <cstdint>
#include <string>

namespace coloc::proto {

struct Identity {
    uid_t uid = static_cast<uid_t>(-1);
    gid_t gid = static_cast<gid_t>(-1);
    std::int64_t encoded_at = 0;  // seconds since the epoch, as munged stamped it
};

// SHA-256 of the canonical body, as 64 hex digits prefixed by the scheme.
std::string body_digest(const std::string& body);

// Encodes a credential whose payload is `body_digest(body)`. `socket` empty = munge's default;
// `ttl_s` 0 = munged's default time-to-live. Throws ProtoError(internal) when munged cannot be
// reached.
std::string make_credential(const std::string& body, const std::string& socket, int ttl_s = 0);

// Decodes and checks a credential against the body it came with; throws ProtoError with
// auth_invalid, auth_replayed, auth_expired or auth_mismatch. `max_age_s` > 0 also refuses
// credentials older than that, whatever munged's own time-to-live.
Identity verify_credential(const std::string& cred, const std::string& body, const std::string& socket, int max_age_s);

}  // namespace coloc::proto
