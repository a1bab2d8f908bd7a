// What unit tests share: the private munged that tests/unit-run started, scratch files, and the
// public datasets beside the clone.
#pragma once

#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <string>

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

// The public datasets (Gavel, Tiresias, ...): ../shared beside the clone, or COLOC_SHARED_DIR.
// A test that needs one fails naming the path it did not find: a missing dataset is no pass.
inline std::string shared_path(const std::string& relative) {
    const char* dir = std::getenv("COLOC_SHARED_DIR");
    return (std::filesystem::path(dir && *dir ? dir : "../shared") / relative).string();
}

}  // namespace coloc::test
