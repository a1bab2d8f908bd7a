// Storage faults for the store's tests: an SQLite VFS over the real one that fails the writes or
// the syncs of files whose name holds a given text, with SQLite's own error codes, as a dying
// disk does (EIO: SQLITE_IOERR_WRITE, a failing fsync: SQLITE_IOERR_FSYNC). While a FaultyDisk
// lives it is SQLite's default VFS, so connections opened meanwhile go through it; with no fault
// set it passes everything through.
#pragma once

#include <string>

namespace coloc::test {

class FaultyDisk {
public:
    FaultyDisk();   // the fault VFS becomes SQLite's default
    ~FaultyDisk();  // the real one is the default again; no faults remain
    FaultyDisk(const FaultyDisk&) = delete;
    FaultyDisk& operator=(const FaultyDisk&) = delete;

    // Files whose path contains `name_part` fail every write, or every sync, until cleared.
    void fail_writes(const std::string& name_part);
    void fail_syncs(const std::string& name_part);
    void clear();
    // Writes and syncs refused so far.
    int faults() const;
};

}  // namespace coloc::test
