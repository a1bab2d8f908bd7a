#include "proto/envelope.hpp"

#include <sys/random.h>
#include <cerrno>

#include "proto/auth.hpp"
#include "proto/errors.hpp"
#include "proto/fields.hpp"

namespace coloc::proto {

namespace {

json parse_object(std::string_view bytes, const char* what, std::size_t limit) {
    if (bytes.size() > limit)
        throw ProtoError(code::kTooLarge, std::string(what) + " of " + std::to_string(bytes.size()) +
                                              " bytes exceeds the limit of " + std::to_string(limit));
    json obj = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
    if (obj.is_discarded()) throw ProtoError(code::kBadJson, std::string(what) + " is not valid JSON");
    if (!obj.is_object()) throw ProtoError(code::kBadJson, std::string(what) + " is not a JSON object");
    return obj;
}

// The message's version, when this side speaks it: this one or the one before.
int check_version(const json& obj) {
    auto it = obj.find("v");
    if (it == obj.end()) throw ProtoError(code::kBadVersion, "field 'v': missing protocol version");
    if (!it->is_number_integer() || it->get<std::int64_t>() < kOldestVersion || it->get<std::int64_t>() > kVersion)
        throw ProtoError(code::kBadVersion,
                         "field 'v': protocol version " + it->dump() + " is not supported (this side speaks " +
                             std::to_string(kOldestVersion) + " to " + std::to_string(kVersion) + ")");
    return static_cast<int>(it->get<std::int64_t>());
}

// The bytes a request's credential covers: the request less its trailing `,"cred":"..."` member
// (see envelope.hpp). A request with its credential elsewhere comes from a plugin or colocctl
// older than that rule, whose credential covers the body as nlohmann::json writes it.
std::string signed_bytes(std::string_view bytes, const std::string& cred, const json& body) {
    const std::string member = "\"cred\":" + json(cred).dump() + "}";
    if (!bytes.ends_with(member)) return body.dump();
    std::string_view rest = bytes.substr(0, bytes.size() - member.size());
    if (rest.ends_with(',')) rest.remove_suffix(1);
    return std::string(rest) + "}";
}

}  // namespace

std::string fresh_nonce() {
    unsigned char raw[16];
    std::size_t got = 0;
    while (got < sizeof raw) {
        const ssize_t n = ::getrandom(raw + got, sizeof raw - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw ProtoError(code::kInternal, "cannot read random bytes for a nonce");
        got += static_cast<std::size_t>(n);
    }
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (unsigned char b : raw) {
        out += kHex[b >> 4];
        out += kHex[b & 15];
    }
    return out;
}

std::string seal_request(json body, const std::string& munge_socket, int ttl_s) {
    body["v"] = kVersion;
    if (!body.contains(kNonce)) body[kNonce] = fresh_nonce();
    body.erase("cred");
    const std::string bytes = body.dump();
    return with_credential(bytes, make_credential(bytes, munge_socket, ttl_s));
}

std::string with_credential(std::string_view body, const std::string& cred) {
    std::string wire(body.substr(0, body.rfind('}')));
    const bool empty = wire.find_last_not_of(" \t\r\n") == wire.find('{');
    wire += (empty ? "" : ",") + std::string("\"cred\":") + json(cred).dump() + "}";
    return wire;
}

Request open_request(std::string_view bytes) {
    json obj = parse_object(bytes, "request", kMaxMessage);
    Request req;
    req.version = check_version(obj);
    req.op = get_string(obj, "op", 64);
    auto cred = obj.find("cred");
    if (cred != obj.end()) {
        if (!cred->is_string())
            throw ProtoError(code::kAuthInvalid, "field 'cred': expected a munge credential string");
        req.cred = cred->get<std::string>();
        obj.erase(cred);
        req.canonical = signed_bytes(bytes, req.cred, obj);
    } else {
        req.canonical = obj.dump();
    }
    req.body = std::move(obj);
    return req;
}

json ok_reply_object(json fields, int version) {
    fields["v"] = version;
    fields["ok"] = true;
    return fields;
}

json error_reply_object(const std::string& code, const std::string& message, int version) {
    return {{"v", version}, {"ok", false}, {"error", {{"code", code}, {"message", message}}}};
}

std::string ok_reply(json fields, int version) { return ok_reply_object(std::move(fields), version).dump(); }

std::string error_reply(const std::string& code, const std::string& message, int version) {
    return error_reply_object(code, message, version).dump();
}

std::string request_nonce(std::string_view request) {
    return nonce_of(json::parse(request, nullptr, /*allow_exceptions=*/false));
}

std::string nonce_of(const json& body) {
    if (!body.is_object()) return "";
    const auto it = body.find(kNonce);
    if (it == body.end() || !it->is_string() || it->get_ref<const std::string&>().size() > kMaxNonce) return "";
    return it->get<std::string>();
}

std::string echo_nonce(std::string_view request, std::string reply) {
    const std::string nonce = request_nonce(request);
    const auto close = reply.rfind('}');
    if (nonce.empty() || close == std::string::npos) return reply;
    const bool empty = reply.find_last_not_of(" \t\r\n", close - 1) == reply.find('{');
    reply.insert(close, std::string(empty ? "" : ",") + "\"" + kNonce + "\":" + json(nonce).dump());
    return reply;
}

json verify_reply(std::string_view bytes, const std::string& nonce) {
    json obj = parse_object(bytes, "reply", kMaxReply);
    check_version(obj);
    if (nonce.empty()) return obj;
    const auto it = obj.find(kNonce);
    if (it == obj.end() || !it->is_string())
        throw ProtoError(code::kReplyMismatch,
                         "the reply does not echo the request's nonce: it answers no request of ours");
    if (it->get_ref<const std::string&>() != nonce)
        throw ProtoError(code::kReplyMismatch, "the reply echoes another request's nonce: it answers another request");
    obj.erase(it);  // the exchange's, not the answer's
    return obj;
}

json open_reply(std::string_view bytes, const std::string& nonce) {
    json obj = verify_reply(bytes, nonce);
    auto ok = obj.find("ok");
    if (ok == obj.end() || !ok->is_boolean()) throw ProtoError(code::kBadJson, "reply has no 'ok' flag");
    if (!ok->get<bool>()) {
        const json& err = obj.value("error", json::object());
        std::string c = err.is_object() && err.contains("code") && err["code"].is_string()
                            ? err["code"].get<std::string>()
                            : std::string(code::kInternal);
        std::string m = err.is_object() && err.contains("message") && err["message"].is_string()
                            ? err["message"].get<std::string>()
                            : std::string("error without a message");
        throw ProtoError(c, m);
    }
    return obj;
}

}  // namespace coloc::proto
