// The last line every benchmark prints: `targets: met`, or `targets: missed: A; B` naming each
// target that missed. Returns the exit status the benchmark ends with (0 when all were met).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace coloc::bench {

inline int print_targets(const std::vector<std::string>& missed) {
    if (missed.empty()) {
        std::printf("targets: met\n");
        return 0;
    }
    std::string which;
    for (const std::string& m : missed) which += (which.empty() ? "" : "; ") + m;
    std::printf("targets: missed: %s\n", which.c_str());
    return 1;
}

}  // namespace coloc::bench
