// The envelope every message travels in: `{"v":1,"op":...,"cred":...}` for requests,
// `{"v":1,"ok":true,...}` or `{"v":1,"ok":false,"error":{"code","message"}}` for replies.
//
// A request's credential covers its bytes, not what a JSON library makes of them: the sender
// writes the body once (one JSON object, B), makes the credential over B and sends B with
// `,"cred":"..."` put in before its closing '}'. The receiver cuts that last member out again and
// checks the digest over the bytes as they arrived, so the two sides need not write JSON alike.
//
// Every request carries a fresh random "nonce" (under the credential) and colocd's reply echoes
// it: a client refuses a reply that does not, as one that answers another request.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace coloc::proto {

using json = nlohmann::json;

// The protocol version this side speaks, and the oldest one colocd still serves. colocd answers
// each request in the version it came in, so that during a rolling upgrade (colocd first, then
// the nodes) a plugin or colocctl not yet upgraded is served, not refused. Version 2 added the
// optional "cluster" member of requests.
inline constexpr int kVersion = 2;
inline constexpr int kOldestVersion = 1;
// A request is small (one job's launch, one admin query) and comes from anyone on the cluster:
// colocd refuses a larger one. A reply comes from colocd itself and lists what was asked for
// (an admin's `colocctl jobs` or `history` grows with the cluster), so it may be far larger.
inline constexpr std::size_t kMaxMessage = 64 * 1024;
inline constexpr std::size_t kMaxReply = 256 * 1024 * 1024;

inline constexpr const char* kNonce = "nonce";
inline constexpr std::size_t kMaxNonce = 64;

struct Request {
    int version = kVersion;  // the sender's protocol version, which its reply speaks
    std::string op;
    std::string cred;       // empty when absent
    std::string canonical;  // the bytes the credential's digest covers: the request less its "cred"
    json body;              // the whole body without "cred"
};

// A fresh nonce: 128 random bits as hex.
std::string fresh_nonce();

// Client side: adds "v" and a fresh "nonce" (unless the body has one), writes the body, makes a credential over those bytes (`ttl_s` 0 =
// munged's default time-to-live) and returns the wire bytes.
std::string seal_request(json body, const std::string& munge_socket, int ttl_s = 0);

// The wire bytes of a request: `body` (the bytes of one JSON object, the credential's subject)
// with `cred` as its last member.
std::string with_credential(std::string_view body, const std::string& cred);

// Server side: size, JSON, version and op checks; throws ProtoError. The credential is
// extracted but not verified (verify_credential does that).
Request open_request(std::string_view bytes);

// Replies, in `version` (the request's: Request::version).
std::string ok_reply(json fields = json::object(), int version = kVersion);
std::string error_reply(const std::string& code, const std::string& message, int version = kVersion);
// The same as objects, for a server that adds to a reply before it sends it.
json ok_reply_object(json fields = json::object(), int version = kVersion);
json error_reply_object(const std::string& code, const std::string& message, int version = kVersion);

// The nonce of a request's wire bytes; empty when it has none (or is not a JSON object).
std::string request_nonce(std::string_view request);
// The same of a request already opened (Request::body), without reading its bytes again.
std::string nonce_of(const json& body);

// Server side: `reply` (one JSON object) with the nonce of `request` as a member, when the
// request has one.
std::string echo_nonce(std::string_view request, std::string reply);

// Client side: the reply object, when it is one of ours (a version from kOldestVersion to
// kVersion) and answers the request whose nonce is `nonce`; throws ProtoError bad_json /
// bad_version / reply_mismatch otherwise. An empty `nonce` (a request sent without one) checks
// no nonce. The nonce is taken out of the object returned. Whether it says ok is left to
// open_reply.
json verify_reply(std::string_view bytes, const std::string& nonce);

// verify_reply, then the reply object; throws ProtoError with the server's code when it says
// ok:false.
json open_reply(std::string_view bytes, const std::string& nonce = "");

}  // namespace coloc::proto
