#include "spank/user_options.hpp"

#include <cctype>
#include <cstring>

namespace coloc::spank {

namespace {
constexpr std::size_t kMaxProfile = 64;  // proto's limit for PlaceRequest.profile
}

std::string set_profile(UserOptions& options, const char* value) {
    if (!value || !*value) return "--coloc-profile needs a name";
    std::size_t n = std::strlen(value);
    if (n > kMaxProfile) return "--coloc-profile name is longer than 64 characters";
    for (std::size_t i = 0; i < n; ++i) {
        unsigned char c = static_cast<unsigned char>(value[i]);
        if (!(std::isalnum(c) || c == '_' || c == '-' || c == '.'))
            return std::string("--coloc-profile name '") + value + "' may hold only letters, digits, '_', '-' and '.'";
    }
    options.profile = value;
    return {};
}

std::string set_switch(UserOptions& options, const char* value) {
    std::string v = value ? value : "";
    if (v == "on")
        options.off = false;
    else if (v == "off")
        options.off = true;
    else
        return "--coloc expects on or off, not '" + v + "'";
    return {};
}

}  // namespace coloc::spank
