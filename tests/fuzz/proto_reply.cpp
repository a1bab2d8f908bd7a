// Fuzz target: what colocctl and the plugin do with any bytes that come back as a reply: the
// envelope and the place reply decoder. Only ProtoError may come out.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "proto/envelope.hpp"
#include "proto/errors.hpp"
#include "proto/messages.hpp"

using namespace coloc::proto;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view bytes(reinterpret_cast<const char*>(data), size);
    try {
        json reply = open_reply(bytes);
        PlaceReply::from_json(reply);
    } catch (const ProtoError&) {}
    return 0;
}
