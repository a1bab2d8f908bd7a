// Fuzz target: the line the plugin's bounded child writes on its pipe (spank/exchange_message):
// whatever arrives, decode only answers or refuses, and what it accepts survives encode again.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "spank/exchange_message.hpp"

using namespace coloc::spank;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view line(reinterpret_cast<const char*>(data), size);
    const auto first = decode(line);
    if (!first) return 0;
    const std::string again = encode(*first);
    if (again.find('\n') != std::string::npos) __builtin_trap();  // one line on the pipe
    const auto second = decode(again);
    if (!second || encode(*second) != again) __builtin_trap();
    return 0;
}
