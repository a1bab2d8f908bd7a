#include "spank/user_notice.hpp"

#include <unistd.h>

#include <cerrno>

namespace coloc::spank {

std::string unknown_profile_line(const std::string& name) {
    return "coloc: --coloc-profile '" + name +
           "' is not a profile colocd knows; placed as 'default' (colocctl jobs shows it as default (unknown: " + name +
           "))";
}

void tell_user(const std::string& line) {
    const std::string text = line + "\n";
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(2, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        done += static_cast<std::size_t>(n);
    }
}

}  // namespace coloc::spank
