#include "daemon/store/journal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace coloc::daemon {

namespace {

// A record: magic, payload length, sequence number, CRC-32 of the number and the payload, then
// the payload. Zeros (the reserve as written at start, a cleared journal) end the records.
constexpr std::uint32_t kMagic = 0x314a4c43;  // "CLJ1"

std::uint32_t crc32(std::uint32_t crc, const void* data, std::size_t n) {
    static const std::array<std::uint32_t, 256> table = [] {
        std::array<std::uint32_t, 256> t{};
        for (std::uint32_t i = 0; i < 256; ++i) {
            std::uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
            t[i] = c;
        }
        return t;
    }();
    crc = ~crc;
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

std::uint32_t record_crc(std::uint64_t seq, std::string_view payload) {
    return crc32(crc32(0, &seq, sizeof seq), payload.data(), payload.size());
}

struct Header {
    std::uint32_t magic = 0, length = 0;
    std::uint64_t seq = 0;
    std::uint32_t crc = 0, unused = 0;
};
static_assert(sizeof(Header) == Journal::kHeaderBytes);

}  // namespace

Journal::Journal(std::string path, std::uint64_t reserve_bytes) : path_(std::move(path)), reserve_(reserve_bytes) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0) fail("cannot open", errno);
    try {
        open_reserved();
    } catch (...) {
        ::close(fd_);
        throw;
    }
}

void Journal::open_reserved() {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) fail("cannot stat", errno);
    const auto file_bytes = static_cast<std::uint64_t>(st.st_size);
    read_records(file_bytes);
    // Reserve the blocks now (written as zeros where the filesystem cannot allocate without
    // writing), so that no append needs a block from a disk that has filled up since.
    if (file_bytes < reserve_) {
        if (const int err = ::posix_fallocate(fd_, 0, static_cast<off_t>(reserve_)))
            fail("cannot reserve " + std::to_string(reserve_ >> 20) + " MiB", err);
        if (::fsync(fd_) != 0) fail("cannot sync", errno);
    }
    if (file_bytes > reserve_) reserve_ = file_bytes;  // a journal reserved larger before keeps its space
}

Journal::~Journal() {
    if (fd_ >= 0) ::close(fd_);
}

void Journal::read_records(std::uint64_t file_bytes) {
    std::uint64_t at = 0;
    while (at + kHeaderBytes <= file_bytes) {
        Header h;
        if (::pread(fd_, &h, sizeof h, static_cast<off_t>(at)) != static_cast<ssize_t>(sizeof h)) break;
        if (h.magic != kMagic || h.length > file_bytes - at - kHeaderBytes) break;
        if (!found_.empty() && h.seq != found_.back().seq + 1) break;  // a record of before a clear
        std::string payload(h.length, '\0');
        if (::pread(fd_, payload.data(), h.length, static_cast<off_t>(at + kHeaderBytes)) !=
            static_cast<ssize_t>(h.length))
            break;
        if (record_crc(h.seq, payload) != h.crc) break;  // torn: never acknowledged
        found_.push_back({h.seq, std::move(payload)});
        at += kHeaderBytes + h.length;
    }
    end_ = at;
}

bool Journal::fits(std::uint64_t payload_bytes) const {
    return end_ + kHeaderBytes + payload_bytes + kHeaderBytes <= reserve_;  // and the zeros that end it
}

void Journal::append(std::uint64_t seq, std::string_view payload) {
    if (!fits(payload.size()))
        throw JournalError("journal " + path_ + " is full: its " + std::to_string(reserve_ >> 20) +
                           " MiB reserve holds no record of " + std::to_string(payload.size()) + " bytes more");
    Header h;
    h.magic = kMagic;
    h.length = static_cast<std::uint32_t>(payload.size());
    h.seq = seq;
    h.crc = record_crc(seq, payload);
    std::string bytes(reinterpret_cast<const char*>(&h), sizeof h);
    bytes.append(payload);
    write_at(end_, bytes.data(), bytes.size());
    end_ += bytes.size();
}

void Journal::sync() {
    if (::fdatasync(fd_) != 0) fail("cannot sync", errno);
}

void Journal::rewind(std::uint64_t mark) {
    if (mark >= end_) return;
    const Header zero;
    write_at(mark, &zero, sizeof zero);
    end_ = mark;
    sync();
}

void Journal::clear() {
    rewind(0);
    found_.clear();
}

void Journal::write_at(std::uint64_t offset, const void* data, std::size_t n) {
    const auto* p = static_cast<const char*>(data);
    while (n > 0) {
        const ssize_t w = ::pwrite(fd_, p, n, static_cast<off_t>(offset));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) fail("cannot write", w < 0 ? errno : EIO);
        p += w;
        n -= static_cast<std::size_t>(w);
        offset += static_cast<std::uint64_t>(w);
    }
}

void Journal::fail(const std::string& what, int err) const {
    throw JournalError("journal " + path_ + ": " + what + ": " + std::strerror(err));
}

}  // namespace coloc::daemon
