#include "base/files.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace coloc::base {

std::string os_reason(const char* fallback) { return errno ? std::strerror(errno) : fallback; }

std::string open_for_reading(std::ifstream& in, const std::string& path) {
    // An ifstream opens a directory without complaint and then reads nothing: ask first.
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return "is a directory, not a file";
    errno = 0;
    in.open(path);
    if (!in) return std::string("cannot open: ") + os_reason();
    return "";
}

std::string open_for_writing(std::ofstream& out, const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return "is a directory, not a file";
    errno = 0;
    out.open(path);
    if (!out) return std::string("cannot open for writing: ") + os_reason();
    return "";
}

}  // namespace coloc::base
