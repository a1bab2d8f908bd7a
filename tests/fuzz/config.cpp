// Fuzz target: colocd.yaml. Only ConfigError (naming file, line and key) may come out.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    try {
        coloc::daemon::parse_config(text, "colocd.yaml");
    } catch (const coloc::daemon::ConfigError&) {}
    return 0;
}
