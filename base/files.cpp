#include "base/files.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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

std::string replace_file(const std::string& path, const std::string& text, unsigned mode) {
    const std::string tmp = path + ".new";
    errno = 0;
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return "cannot open " + tmp + " for writing: " + os_reason();
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
    }
    // The mode is set on the file itself, not left to the umask (a reader in another account).
    const bool ok = done == text.size() && ::fchmod(fd, static_cast<mode_t>(mode)) == 0;
    const std::string why = ok ? "" : "cannot write " + tmp + ": " + os_reason();
    ::close(fd);
    if (ok && ::rename(tmp.c_str(), path.c_str()) == 0) return "";
    const std::string reason = ok ? "cannot replace " + path + ": " + os_reason() : why;
    ::unlink(tmp.c_str());
    return reason;
}

}  // namespace coloc::base
