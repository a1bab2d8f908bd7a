// The backlog's copy on disk. Every history write colocd queues while the database cannot be
// written is appended here and synced before colocd acknowledges it, so that a colocd killed
// before the database takes writes again loses nothing it acknowledged. The file's space is
// allocated when colocd starts, so that an append never needs a block from a disk that has since
// filled up. Records carry consecutive sequence numbers; the database stores the last
// one it applied in the same transaction as the record, so a record replayed twice is stored once.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace coloc::daemon {

// The journal cannot be opened, reserved or written; the message names the file and the reason.
class JournalError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class Journal {
public:
    struct Record {
        std::uint64_t seq = 0;
        std::string payload;
    };

    // Opens `path` (creating it), allocates `reserve_bytes` of it, and reads the
    // records it holds: they end at the first torn, stale or foreign one.
    Journal(std::string path, std::uint64_t reserve_bytes);
    ~Journal();
    Journal(const Journal&) = delete;
    Journal& operator=(const Journal&) = delete;

    const std::string& path() const { return path_; }
    const std::vector<Record>& found() const { return found_; }
    std::uint64_t reserve() const { return reserve_; }
    std::uint64_t used() const { return end_; }
    // Whether `payload_bytes` more of records fit in the reserve.
    bool fits(std::uint64_t payload_bytes) const;

    // Appends a record after the others; durable only after sync().
    void append(std::uint64_t seq, std::string_view payload);
    void sync();
    // Where the records end now, and back to there: what was appended after `mark` is dropped
    // (synced), for writes that were never acknowledged.
    std::uint64_t mark() const { return end_; }
    void rewind(std::uint64_t mark);
    // Everything is stored in the database: the journal holds nothing again (synced).
    void clear();

    static constexpr std::uint64_t kHeaderBytes = 24;

private:
    void open_reserved();
    void read_records(std::uint64_t file_bytes);
    void write_at(std::uint64_t offset, const void* data, std::size_t n);
    [[noreturn]] void fail(const std::string& what, int err) const;

    std::string path_;
    int fd_ = -1;
    std::uint64_t reserve_ = 0;
    std::uint64_t end_ = 0;
    std::vector<Record> found_;
};

}  // namespace coloc::daemon
