// One fuzz target per trace reader: each reads the input strictly (malformed records throw
// TraceError naming file and line) and again with skip_bad (malformed records are counted).
// Only TraceError may come out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "replay/readers.hpp"

namespace coloc::fuzz {

inline void read_both_ways(const std::uint8_t* data, std::size_t size, replay::TraceFormat format) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    for (bool skip_bad : {false, true}) {
        std::istringstream in(text);
        replay::ReadOptions options;
        options.skip_bad = skip_bad;
        try {
            replay::read_trace(in, format, "trace", options);
        } catch (const replay::TraceError&) {}
    }
}

}  // namespace coloc::fuzz

#define COLOC_TRACE_FUZZ_TARGET(format)                                                 \
    extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) { \
        coloc::fuzz::read_both_ways(data, size, format);                                \
        return 0;                                                                       \
    }
