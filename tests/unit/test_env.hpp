// What unit tests share: the private munged that tests/unit-run started, and scratch files.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace coloc::test {

inline std::string munge_socket() {
    const char* s = std::getenv("COLOC_MUNGE_SOCKET");
    return s ? s : "";
}

// A fresh path under the run's scratch directory (or /tmp), unique per call.
inline std::string scratch(const std::string& name) {
    static int counter = 0;
    const char* base = std::getenv("COLOC_TEST_TMP");
    std::filesystem::path dir = base ? base : "/tmp";
    return (dir / ("coloc-test-" + std::to_string(getpid()) + "-" + std::to_string(++counter) + "-" + name)).string();
}

}  // namespace coloc::test
