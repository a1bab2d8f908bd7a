#include "slurm/hostlist.hpp"

#include <cstdlib>

extern "C" {
#include <slurm/slurm.h>
}

namespace coloc::slurm {

namespace {

// libslurm leaks memory on some malformed expressions ("n[01-0L]") and expands any range it is
// given ("n[1-999999999]"), so the bracket syntax and the number of names are checked first:
// "prefix[1-4,7]suffix" groups (several per name are a cross product), names separated by commas.
bool well_formed(const std::string& expr, std::size_t max_names) {
    std::size_t total = 0, in_name = 1;
    for (std::size_t i = 0; i <= expr.size(); ++i) {
        const char c = i < expr.size() ? expr[i] : ',';
        if (c == ']') return false;
        if (c == ',') {  // end of one name (or name pattern)
            total += in_name;
            if (total > max_names) return false;
            in_name = 1;
            continue;
        }
        if (c != '[') continue;
        std::size_t group = 0;
        for (++i;;) {  // ranges "a" or "a-b", separated by commas, up to ']'
            auto number = [&](long& v) {
                std::size_t digits = 0;
                for (v = 0; i < expr.size() && expr[i] >= '0' && expr[i] <= '9' && digits < 9; ++i, ++digits)
                    v = v * 10 + (expr[i] - '0');
                return digits > 0 && (i >= expr.size() || expr[i] < '0' || expr[i] > '9');
            };
            long lo = 0, hi = 0;
            if (!number(lo)) return false;
            hi = lo;
            if (i < expr.size() && expr[i] == '-') {
                ++i;
                if (!number(hi) || hi < lo) return false;
            }
            group += static_cast<std::size_t>(hi - lo + 1);
            if (group > max_names) return false;
            if (i >= expr.size()) return false;
            if (expr[i] == ']') break;
            if (expr[i] != ',') return false;
            ++i;
        }
        in_name *= group;
        if (in_name > max_names) return false;
    }
    return true;
}

constexpr std::size_t kMaxNames = 65536;  // libslurm's own limit for one range

}  // namespace

std::optional<std::vector<std::string>> expand_hostlist(const std::string& expr) {
    if (!well_formed(expr, kMaxNames)) return std::nullopt;
    // A pointer on every release: hostlist_t is one up to 23.02 and the struct from 23.11.
    auto* hl = slurm_hostlist_create(expr.c_str());
    if (!hl) return std::nullopt;
    std::vector<std::string> out;
    while (char* host = slurm_hostlist_shift(hl)) {
        out.emplace_back(host);
        std::free(host);
    }
    slurm_hostlist_destroy(hl);
    return out;
}

}  // namespace coloc::slurm
