// colocd's CURVE key pair (ZeroMQ's CurveZMQ): colocd proves with it that a reply comes from
// colocd, before the plugin or colocctl send it anything. Keys are Z85 text, 40 characters,
// one per file: the secret in a file only colocd's user may read, the public key in a file
// anyone may read and the nodes are given.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace coloc::proto {

inline constexpr std::size_t kCurveKeyChars = 40;

struct CurveKeys {
    std::string public_key;  // Z85
    std::string secret_key;  // Z85
};

// Whether this libzmq was built with CURVE (libsodium).
bool curve_available();

// colocd's keys from `secret_file`, made there (mode 0600) when the file does not exist; the
// public key is then written to `public_file` (mode 0644) when that does not hold it already.
// Throws std::runtime_error naming the file and the reason: unreadable, not a key, or readable
// by others than its owner.
CurveKeys load_or_create_server_keys(const std::string& secret_file, const std::string& public_file);

// The key a key file holds (its first line); throws std::runtime_error naming the file and the
// reason. Needs no ZeroMQ.
std::string read_key_file(const std::string& file);

// The public key file colocd writes beside its secret key file.
std::string public_key_file_for(const std::string& secret_file);

}  // namespace coloc::proto
