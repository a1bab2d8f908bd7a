#include "tests/support/fault_vfs.hpp"

#include <sqlite3.h>

#include <atomic>
#include <cstring>
#include <mutex>

namespace coloc::test {

namespace {

struct Faults {
    std::mutex mutex;
    std::string writes, syncs;  // the name parts; empty: none
    std::atomic<int> count{0};
};
Faults& state() {
    static Faults f;
    return f;
}

bool matches(const std::string& part, const char* name) {
    return !part.empty() && name && std::strstr(name, part.c_str());
}

// A file of the fault VFS: its name, then the real VFS's file right behind it.
struct FaultFile {
    sqlite3_file base;
    const char* name;
    sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
};
FaultFile* self(sqlite3_file* f) { return reinterpret_cast<FaultFile*>(f); }
sqlite3_file* real(sqlite3_file* f) { return self(f)->real(); }

bool faulted(const std::string Faults::*which, sqlite3_file* f) {
    Faults& fs = state();
    std::lock_guard lock(fs.mutex);
    if (!matches(fs.*which, self(f)->name)) return false;
    ++fs.count;
    return true;
}

int x_close(sqlite3_file* f) { return real(f)->pMethods->xClose(real(f)); }
int x_read(sqlite3_file* f, void* p, int n, sqlite3_int64 at) { return real(f)->pMethods->xRead(real(f), p, n, at); }
int x_write(sqlite3_file* f, const void* p, int n, sqlite3_int64 at) {
    if (faulted(&Faults::writes, f)) return SQLITE_IOERR_WRITE;
    return real(f)->pMethods->xWrite(real(f), p, n, at);
}
int x_truncate(sqlite3_file* f, sqlite3_int64 size) {
    if (faulted(&Faults::writes, f)) return SQLITE_IOERR_TRUNCATE;
    return real(f)->pMethods->xTruncate(real(f), size);
}
int x_sync(sqlite3_file* f, int flags) {
    if (faulted(&Faults::syncs, f)) return SQLITE_IOERR_FSYNC;
    return real(f)->pMethods->xSync(real(f), flags);
}
int x_file_size(sqlite3_file* f, sqlite3_int64* size) { return real(f)->pMethods->xFileSize(real(f), size); }
int x_lock(sqlite3_file* f, int level) { return real(f)->pMethods->xLock(real(f), level); }
int x_unlock(sqlite3_file* f, int level) { return real(f)->pMethods->xUnlock(real(f), level); }
int x_check_reserved(sqlite3_file* f, int* out) { return real(f)->pMethods->xCheckReservedLock(real(f), out); }
int x_file_control(sqlite3_file* f, int op, void* arg) { return real(f)->pMethods->xFileControl(real(f), op, arg); }
int x_sector_size(sqlite3_file* f) { return real(f)->pMethods->xSectorSize(real(f)); }
int x_device(sqlite3_file* f) { return real(f)->pMethods->xDeviceCharacteristics(real(f)); }
int x_shm_map(sqlite3_file* f, int region, int size, int extend, void volatile** out) {
    return real(f)->pMethods->xShmMap(real(f), region, size, extend, out);
}
int x_shm_lock(sqlite3_file* f, int offset, int n, int flags) {
    return real(f)->pMethods->xShmLock(real(f), offset, n, flags);
}
void x_shm_barrier(sqlite3_file* f) { real(f)->pMethods->xShmBarrier(real(f)); }
int x_shm_unmap(sqlite3_file* f, int del) { return real(f)->pMethods->xShmUnmap(real(f), del); }
// No memory-mapped reads: every page goes through x_read.
int x_fetch(sqlite3_file*, sqlite3_int64, int, void** out) {
    *out = nullptr;
    return SQLITE_OK;
}
int x_unfetch(sqlite3_file* f, sqlite3_int64 at, void* p) { return real(f)->pMethods->xUnfetch(real(f), at, p); }

const sqlite3_io_methods kMethods = {
    3,          x_close,       x_read,           x_write,        x_truncate,    x_sync,   x_file_size,
    x_lock,     x_unlock,      x_check_reserved, x_file_control, x_sector_size, x_device, x_shm_map,
    x_shm_lock, x_shm_barrier, x_shm_unmap,      x_fetch,        x_unfetch};

sqlite3_vfs* real_vfs() {
    static sqlite3_vfs* vfs = sqlite3_vfs_find(nullptr);
    return vfs;
}

int x_open(sqlite3_vfs*, const char* name, sqlite3_file* f, int flags, int* out_flags) {
    FaultFile* ff = self(f);
    ff->base.pMethods = nullptr;
    ff->name = name;
    const int rc = real_vfs()->xOpen(real_vfs(), name, ff->real(), flags, out_flags);
    if (rc == SQLITE_OK && ff->real()->pMethods) ff->base.pMethods = &kMethods;
    return rc;
}

sqlite3_vfs& fault_vfs() {
    static sqlite3_vfs vfs = [] {
        sqlite3_vfs v = *real_vfs();  // everything but opening files is the real VFS's
        v.zName = "coloc-faulty-disk";
        v.szOsFile = static_cast<int>(sizeof(FaultFile)) + real_vfs()->szOsFile;
        v.pNext = nullptr;
        v.xOpen = x_open;
        return v;
    }();
    return vfs;
}

}  // namespace

FaultyDisk::FaultyDisk() {
    real_vfs();
    sqlite3_vfs_register(&fault_vfs(), 1);
}

FaultyDisk::~FaultyDisk() {
    clear();
    sqlite3_vfs_register(real_vfs(), 1);
}

void FaultyDisk::fail_writes(const std::string& name_part) {
    std::lock_guard lock(state().mutex);
    state().writes = name_part;
}

void FaultyDisk::fail_syncs(const std::string& name_part) {
    std::lock_guard lock(state().mutex);
    state().syncs = name_part;
}

void FaultyDisk::clear() {
    std::lock_guard lock(state().mutex);
    state().writes.clear();
    state().syncs.clear();
}

int FaultyDisk::faults() const { return coloc::test::state().count.load(); }

}  // namespace coloc::test
