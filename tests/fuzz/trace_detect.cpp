// Fuzz target: format detection, then whichever reader it picks. Only TraceError may come out.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "replay/readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    try {
        coloc::replay::read_trace(in, std::nullopt, "trace", {});
    } catch (const coloc::replay::TraceError&) {}
    return 0;
}
