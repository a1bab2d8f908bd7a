#include "proto/auth.hpp"

#include <munge.h>
#include <sodium.h>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>

#include "proto/errors.hpp"

namespace coloc::proto {

namespace {

// SHA-256: the body travels in clear beside the credential, so the digest must be one that
// no one can find a second body for (a plain hash such as FNV would let a captured credential
// carry a forged body).
constexpr const char* kScheme = "coloc2:";

struct CtxDeleter {
    void operator()(munge_ctx_t ctx) const { munge_ctx_destroy(ctx); }
};
using Ctx = std::unique_ptr<std::remove_pointer_t<munge_ctx_t>, CtxDeleter>;

Ctx make_ctx(const std::string& socket) {
    Ctx ctx(munge_ctx_create());
    if (!ctx) throw ProtoError(code::kInternal, "munge: cannot create a context");
    if (!socket.empty() && munge_ctx_set(ctx.get(), MUNGE_OPT_SOCKET, socket.c_str()) != EMUNGE_SUCCESS)
        throw ProtoError(code::kInternal, "munge: cannot use socket " + socket);
    return ctx;
}

}  // namespace

std::string body_digest(const std::string& body) {
    unsigned char hash[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(hash, reinterpret_cast<const unsigned char*>(body.data()), body.size());
    char hex[2 * crypto_hash_sha256_BYTES + 1];
    sodium_bin2hex(hex, sizeof hex, hash, sizeof hash);
    return std::string(kScheme) + hex;
}

std::string make_credential(const std::string& body, const std::string& socket, int ttl_s) {
    Ctx ctx = make_ctx(socket);
    if (ttl_s > 0) munge_ctx_set(ctx.get(), MUNGE_OPT_TTL, ttl_s);
    std::string payload = body_digest(body);
    char* cred = nullptr;
    munge_err_t err = munge_encode(&cred, ctx.get(), payload.data(), static_cast<int>(payload.size()));
    if (err != EMUNGE_SUCCESS) {
        std::string why = munge_ctx_strerror(ctx.get()) ? munge_ctx_strerror(ctx.get()) : munge_strerror(err);
        std::free(cred);
        throw ProtoError(code::kInternal, "munge: cannot encode a credential: " + why);
    }
    std::string out(cred);
    std::free(cred);
    return out;
}

Identity verify_credential(const std::string& cred, const std::string& body, const std::string& socket, int max_age_s) {
    Ctx ctx = make_ctx(socket);
    void* payload = nullptr;
    int len = 0;
    Identity id;
    munge_err_t err = munge_decode(cred.c_str(), ctx.get(), &payload, &len, &id.uid, &id.gid);
    std::unique_ptr<void, decltype(&std::free)> hold(payload, &std::free);
    switch (err) {
        case EMUNGE_SUCCESS:
            break;
        case EMUNGE_CRED_REPLAYED:
            throw ProtoError(code::kAuthReplayed, "munge credential was already used (replayed)");
        case EMUNGE_CRED_EXPIRED:
            throw ProtoError(code::kAuthExpired, "munge credential has expired");
        case EMUNGE_SOCKET:
            throw ProtoError(code::kInternal, "munge: cannot reach munged to check the credential");
        default:
            throw ProtoError(code::kAuthInvalid, std::string("munge credential is invalid: ") + munge_strerror(err));
    }
    time_t encoded = 0;
    if (munge_ctx_get(ctx.get(), MUNGE_OPT_ENCODE_TIME, &encoded) == EMUNGE_SUCCESS)
        id.encoded_at = static_cast<std::int64_t>(encoded);
    if (max_age_s > 0 && id.encoded_at > 0 && std::time(nullptr) - id.encoded_at > max_age_s)
        throw ProtoError(code::kAuthExpired, "munge credential is older than " + std::to_string(max_age_s) + " s");
    std::string got(static_cast<const char*>(payload), payload ? static_cast<std::size_t>(len) : 0);
    if (got != body_digest(body))
        throw ProtoError(code::kAuthMismatch, "munge credential does not belong to this request body");
    return id;
}

}  // namespace coloc::proto
