// Reading key files, without ZeroMQ: spank_coloc.so reads colocd's public key and links no
// ZeroMQ (spank/net_entry.hpp).
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "proto/curve.hpp"

namespace coloc::proto {

namespace {

// Z85's alphabet (ZeroMQ RFC 32).
bool is_z85_key(const std::string& s) {
    static constexpr std::string_view kZ85 =
        "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
    return s.size() == kCurveKeyChars && s.find_first_not_of(kZ85) == std::string::npos;
}

}  // namespace

std::string read_key_file(const std::string& file) {
    std::ifstream in(file);
    if (!in) throw std::runtime_error("CURVE key file " + file + ": " + std::strerror(errno));
    std::string line;
    std::getline(in, line);
    const auto first = line.find_first_not_of(" \t\r");
    const auto last = line.find_last_not_of(" \t\r");
    line = first == std::string::npos ? "" : line.substr(first, last - first + 1);
    if (!is_z85_key(line))
        throw std::runtime_error("CURVE key file " + file + ": expected a Z85 key of " +
                                 std::to_string(kCurveKeyChars) + " characters on its first line");
    return line;
}

std::string public_key_file_for(const std::string& secret_file) { return secret_file + ".pub"; }

}  // namespace coloc::proto
