#include "daemon/store/sqlite.hpp"

#include <utility>

namespace coloc::daemon {

namespace {

// The start of a statement for an error message, without the newline the SQL begins with.
std::string sql_head(const char* sql) {
    std::string_view s(sql ? sql : "");
    while (!s.empty() && (s.front() == '\n' || s.front() == ' ')) s.remove_prefix(1);
    return std::string(s.substr(0, 60));
}

}  // namespace

bool StoreError::write_trouble() const {
    switch (code_) {
        case SQLITE_FULL:
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
        case SQLITE_READONLY:
        case SQLITE_IOERR:
        case SQLITE_CANTOPEN:
        case SQLITE_PROTOCOL:
            return true;
        default:
            return false;
    }
}

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db) {
    int rc =
        sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
    if (rc != SQLITE_OK)
        throw StoreError("cannot prepare '" + std::string(sql.substr(0, 60)) + "': " + sqlite3_errmsg(db), rc);
}

Statement::~Statement() {
    if (stmt_) sqlite3_finalize(stmt_);
}

Statement::Statement(Statement&& o) noexcept : stmt_(std::exchange(o.stmt_, nullptr)), db_(o.db_) {}

Statement& Statement::operator=(Statement&& o) noexcept {
    if (this != &o) {
        if (stmt_) sqlite3_finalize(stmt_);
        stmt_ = std::exchange(o.stmt_, nullptr);
        db_ = o.db_;
    }
    return *this;
}

void Statement::check(int rc, const char* what) const {
    if (rc != SQLITE_OK)
        throw StoreError(
            std::string(what) + " failed for '" + sql_head(sqlite3_sql(stmt_)) + "': " + sqlite3_errmsg(db_), rc);
}

Statement& Statement::reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    return *this;
}

Statement& Statement::bind(int i, std::int64_t v) {
    check(sqlite3_bind_int64(stmt_, i, v), "bind");
    return *this;
}

Statement& Statement::bind(int i, double v) {
    check(sqlite3_bind_double(stmt_, i, v), "bind");
    return *this;
}

Statement& Statement::bind(int i, const std::string& v) {
    check(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT), "bind");
    return *this;
}

bool Statement::step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    std::string why = sqlite3_errmsg(db_);
    sqlite3_reset(stmt_);
    throw StoreError("'" + sql_head(sqlite3_sql(stmt_)) + "' failed: " + why, rc);
}

void Statement::run() {
    while (step()) {}
}

std::string Statement::text(int col) const {
    const unsigned char* p = sqlite3_column_text(stmt_, col);
    return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)))
             : std::string();
}

Database::Database(const std::string& path) {
    int rc =
        sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
        std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
        if (db_) sqlite3_close(db_);
        throw StoreError("cannot open database " + path + ": " + why, rc);
    }
    sqlite3_busy_timeout(db_, 2000);
}

Database::~Database() {
    if (db_) sqlite3_close_v2(db_);
}

void Database::exec(const std::string& sql) {
    char* err = nullptr;
    if (int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err); rc != SQLITE_OK) {
        std::string why = err ? err : "unknown error";
        sqlite3_free(err);
        throw StoreError("'" + sql.substr(0, 60) + "' failed: " + why, rc);
    }
}

Transaction::Transaction(Database& db) : db_(db), nested_(sqlite3_get_autocommit(db.handle()) == 0) {
    db_.exec(nested_ ? "SAVEPOINT coloc_tx" : "BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
    if (!done_) {
        try {
            db_.exec(nested_ ? "ROLLBACK TO coloc_tx; RELEASE coloc_tx" : "ROLLBACK");
        } catch (...) {
            // The transaction may already be gone (e.g. SQLite rolled it back on an I/O error).
        }
    }
}

void Transaction::commit() {
    db_.exec(nested_ ? "RELEASE coloc_tx" : "COMMIT");
    done_ = true;
}

}  // namespace coloc::daemon
