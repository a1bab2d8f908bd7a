// Protocol errors: a stable code for programs and a message for people.
#pragma once

#include <stdexcept>
#include <string>

namespace coloc::proto {

// Codes carried in `{"ok":false,"error":{"code":...,"message":...}}`.
namespace code {
inline constexpr const char* kBadJson = "bad_json";
inline constexpr const char* kBadVersion = "bad_version";
inline constexpr const char* kUnknownOp = "unknown_op";
inline constexpr const char* kBadField = "bad_field";
inline constexpr const char* kTooLarge = "too_large";
inline constexpr const char* kAuthMissing = "auth_missing";
inline constexpr const char* kAuthInvalid = "auth_invalid";
inline constexpr const char* kAuthReplayed = "auth_replayed";
inline constexpr const char* kAuthExpired = "auth_expired";
inline constexpr const char* kAuthMismatch = "auth_mismatch";
inline constexpr const char* kForbidden = "forbidden";
inline constexpr const char* kNotFound = "not_found";
inline constexpr const char* kNoCapacity = "no_capacity";
inline constexpr const char* kInternal = "internal";
// The request names a cluster other than the one this colocd serves (colocd.yaml `cluster:`).
inline constexpr const char* kWrongCluster = "wrong_cluster";
// Client side: the reply does not echo the request's nonce (it answers another request).
inline constexpr const char* kReplyMismatch = "reply_mismatch";
// Client side: no answer in time; colocd: it cannot take the request now (its database cannot
// be written and the backlog of writes is full); the plugin falls back as when colocd is away.
inline constexpr const char* kUnavailable = "unavailable";
}  // namespace code

class ProtoError : public std::runtime_error {
public:
    ProtoError(std::string code, const std::string& message) : std::runtime_error(message), code_(std::move(code)) {}
    const std::string& code() const { return code_; }

private:
    std::string code_;
};

}  // namespace coloc::proto
