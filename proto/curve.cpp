#include "proto/curve.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace coloc::proto {

namespace {

[[noreturn]] void fail(const std::string& file, const std::string& why) {
    throw std::runtime_error("CURVE key file " + file + ": " + why);
}

// Writes `key` to `file` through a temporary file in the same directory, so that a reader never
// sees half a key.
void write_key(const std::string& file, const std::string& key, mode_t mode) {
    const std::string tmp = file + ".tmp";
    ::unlink(tmp.c_str());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0) fail(file, std::string("cannot create: ") + std::strerror(errno));
    const std::string text = key + "\n";
    const bool ok = ::fchmod(fd, mode) == 0 &&
                    ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
    const int err = errno;
    ::close(fd);
    if (!ok || ::rename(tmp.c_str(), file.c_str()) != 0) {
        ::unlink(tmp.c_str());
        fail(file, std::string("cannot write: ") + std::strerror(ok ? errno : err));
    }
}

}  // namespace

bool curve_available() { return zmq_has("curve") != 0; }

CurveKeys load_or_create_server_keys(const std::string& secret_file, const std::string& public_file) {
    if (!curve_available()) fail(secret_file, "this libzmq was built without CURVE");
    CurveKeys keys;
    struct stat st {};
    if (::stat(secret_file.c_str(), &st) == 0) {
        if (st.st_mode & (S_IRWXG | S_IRWXO))
            fail(secret_file, "others than its owner may read it (mode " + std::to_string((st.st_mode >> 6) & 7) +
                                  std::to_string((st.st_mode >> 3) & 7) + std::to_string(st.st_mode & 7) +
                                  "): chmod 600 it, or remove it for a new key");
        keys.secret_key = read_key_file(secret_file);
        char pub[kCurveKeyChars + 1];
        if (zmq_curve_public(pub, keys.secret_key.c_str()) != 0) fail(secret_file, "not a CURVE secret key");
        keys.public_key = pub;
    } else if (errno == ENOENT) {
        char pub[kCurveKeyChars + 1], sec[kCurveKeyChars + 1];
        if (zmq_curve_keypair(pub, sec) != 0) fail(secret_file, "cannot make a key pair");
        keys = {pub, sec};
        write_key(secret_file, keys.secret_key, 0600);
    } else {
        fail(secret_file, std::strerror(errno));
    }
    std::ifstream published(public_file);
    std::string line;
    if (!published || !std::getline(published, line) || line != keys.public_key)
        write_key(public_file, keys.public_key, 0644);
    return keys;
}

}  // namespace coloc::proto
