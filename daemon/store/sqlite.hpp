// Thin RAII over SQLite: a connection, prepared statements with typed binds, transactions.
// Every failure throws StoreError naming the statement and SQLite's reason.
#pragma once

#include <sqlite3.h>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace coloc::daemon {

class StoreError : public std::runtime_error {
public:
    explicit StoreError(const std::string& what, int sqlite_code = 0)
        : std::runtime_error(what), code_(sqlite_code & 0xff) {}
    // SQLite's primary result code (SQLITE_FULL, SQLITE_BUSY...); 0 when SQLite gave none.
    int code() const { return code_; }
    // The database cannot take writes now (disk full, locked, read-only, I/O error): the write
    // itself is fine and may succeed later, unlike a broken constraint or a bad statement.
    bool write_trouble() const;

private:
    int code_ = 0;
};

class Statement {
public:
    Statement() = default;
    Statement(sqlite3* db, std::string_view sql);
    ~Statement();
    Statement(Statement&& o) noexcept;
    Statement& operator=(Statement&& o) noexcept;
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    // Resets and clears bindings; returns *this for chaining binds.
    Statement& reset();
    Statement& bind(int i, std::int64_t v);
    Statement& bind(int i, int v) { return bind(i, static_cast<std::int64_t>(v)); }
    Statement& bind(int i, double v);
    Statement& bind(int i, const std::string& v);

    bool step();  // true while a row is available
    void run();   // steps to completion

    std::int64_t int64(int col) const { return sqlite3_column_int64(stmt_, col); }
    double real(int col) const { return sqlite3_column_double(stmt_, col); }
    std::string text(int col) const;
    bool is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

private:
    void check(int rc, const char* what) const;
    sqlite3_stmt* stmt_ = nullptr;
    sqlite3* db_ = nullptr;
};

class Database {
public:
    explicit Database(const std::string& path);
    ~Database();
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;

    sqlite3* handle() const { return db_; }
    void exec(const std::string& sql);
    std::int64_t last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
    void set_busy_timeout(int ms) { sqlite3_busy_timeout(db_, ms); }
    bool in_transaction() const { return sqlite3_get_autocommit(db_) == 0; }

private:
    sqlite3* db_ = nullptr;
};

// BEGIN IMMEDIATE on construction; rolls back unless commit() was called. Inside a transaction
// already open on the connection (a group commit) it is a savepoint instead: its writes stay
// all-or-nothing, and they are stored when the enclosing transaction commits.
class Transaction {
public:
    explicit Transaction(Database& db);
    ~Transaction();
    void commit();

private:
    Database& db_;
    bool nested_ = false;
    bool done_ = false;
};

}  // namespace coloc::daemon
