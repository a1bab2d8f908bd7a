// Fuzz target: what colocd does with any bytes that arrive on its socket, up to the credential
// check: the envelope (size, JSON, version, op, cred) and the launch-path message decoders.
// Only ProtoError may come out; anything else (another exception, a crash, UB, a leak) is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "proto/envelope.hpp"
#include "proto/errors.hpp"
#include "proto/messages.hpp"

using namespace coloc::proto;

template <typename Decode>
void refused_or_decoded(Decode decode) {
    try {
        decode();
    } catch (const ProtoError&) {}
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view bytes(reinterpret_cast<const char*>(data), size);
    Request req;
    try {
        req = open_request(bytes);
    } catch (const ProtoError&) {
        return 0;
    }
    refused_or_decoded([&] { PlaceRequest::from_json(req.body); });
    refused_or_decoded([&] { StartedReport::from_json(req.body); });
    refused_or_decoded([&] { EndedReport::from_json(req.body); });
    // What the decoder accepted re-encodes without throwing.
    refused_or_decoded([&] { (void)PlaceRequest::from_json(req.body).to_json().dump(); });
    return 0;
}
