// Fuzz target: the reply checks of the plugin and colocctl (proto::verify_reply, open_reply) and
// colocd's nonce echo (proto::echo_nonce). The input is a request, a newline, and a reply. Only
// ProtoError may come out; a reply accepted must echo the request's nonce, and colocd's echo of
// a nonce into a reply object must be accepted as that request's.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "proto/envelope.hpp"
#include "proto/errors.hpp"

using namespace coloc::proto;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const auto cut = input.find('\n');
    const std::string_view request = input.substr(0, cut);
    const std::string_view reply = cut == std::string_view::npos ? std::string_view() : input.substr(cut + 1);
    const std::string nonce = request_nonce(request);
    try {
        const json accepted = verify_reply(reply, nonce);
        if (!nonce.empty()) {
            const json raw = json::parse(reply);
            if (!raw.contains(kNonce) || raw[kNonce] != nonce) __builtin_trap();  // accepted another's reply
            if (accepted.contains(kNonce)) __builtin_trap();                      // the nonce left in
        }
    } catch (const ProtoError&) {}
    try {
        open_reply(reply, nonce);
    } catch (const ProtoError&) {}
    // colocd's side: its replies are JSON objects it wrote itself.
    const json object = json::parse(reply, nullptr, /*allow_exceptions=*/false);
    if (!nonce.empty() && object.is_object()) {
        const std::string echoed = echo_nonce(request, object.dump());
        const json back = json::parse(echoed, nullptr, false);
        if (!back.is_object() || back.value(kNonce, std::string()) != nonce) __builtin_trap();
    }
    return 0;
}
