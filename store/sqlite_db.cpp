#include "store/sqlite_db.h"

#include <sqlite3.h>

#include <utility>

namespace hearth::store::sql {

namespace {

// The phrase a user reads for each failure class, and the code it maps to.
struct Failure {
  StoreErrorCode code;
  const char* phrase;
};

Failure classify(int rc) {
  switch (rc & 0xff) {
    case SQLITE_FULL:
      return {StoreErrorCode::kIo, "disk full"};
    case SQLITE_READONLY:
      return {StoreErrorCode::kIo, "database is read-only"};
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return {StoreErrorCode::kIo, "database is locked by another process"};
    case SQLITE_IOERR:
      return {StoreErrorCode::kIo, "I/O error"};
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return {StoreErrorCode::kIo, "cannot open the database file"};
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return {StoreErrorCode::kCorruptFile, "database file is corrupt"};
    case SQLITE_CONSTRAINT:
      return {StoreErrorCode::kInvalidArgument, "constraint violated"};
    case SQLITE_NOMEM:
      return {StoreErrorCode::kIo, "out of memory"};
    default:
      return {StoreErrorCode::kInternal, "SQLite error"};
  }
}

}  // namespace

StoreError error_from(int rc, std::string_view sqlite_message, std::string_view what) {
  const Failure f = classify(rc);
  std::string message = f.phrase;
  if (!what.empty()) message += " while " + std::string(what);
  return StoreError{f.code, std::move(message), std::string(sqlite_message)};
}

StoreError with_context(StoreError error, std::string_view what) {
  if (what.empty() || error.message.find(" while ") != std::string::npos) return error;
  error.message += " while " + std::string(what);
  return error;
}

// Statement ------------------------------------------------------------------

Statement::Statement(Statement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), stmt_(std::exchange(other.stmt_, nullptr)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
  }
  return *this;
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

Statement& Statement::bind(int index, std::int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Statement& Statement::bind(int index, double value) {
  sqlite3_bind_double(stmt_, index, value);
  return *this;
}

Statement& Statement::bind(int index, std::string_view text) {
  // SQLITE_TRANSIENT: SQLite copies the bytes, so temporaries are safe.
  // A default string_view has no data pointer, which SQLite would bind as NULL.
  const char* bytes = text.data() != nullptr ? text.data() : "";
  sqlite3_bind_text64(stmt_, index, bytes, text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  return *this;
}

Statement& Statement::bind(int index, std::optional<std::int64_t> value) {
  return value ? bind(index, *value) : bind_null(index);
}

Statement& Statement::bind(int index, std::optional<double> value) {
  return value ? bind(index, *value) : bind_null(index);
}

Statement& Statement::bind_null(int index) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}

StoreResult<bool> Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return error_from(sqlite3_extended_errcode(db_), sqlite3_errmsg(db_), "");
}

StoreResult<void> Statement::run() {
  for (;;) {
    STORE_ASSIGN_OR_RETURN(const bool row, step());
    if (!row) return {};
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
}

std::int64_t Statement::int64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

double Statement::real(int column) const {
  return sqlite3_column_double(stmt_, column);
}

std::string Statement::text(int column) const {
  const unsigned char* p = sqlite3_column_text(stmt_, column);
  const int n = sqlite3_column_bytes(stmt_, column);
  if (p == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::optional<std::int64_t> Statement::optional_int64(int column) const {
  if (is_null(column)) return std::nullopt;
  return int64(column);
}

// Db -------------------------------------------------------------------------

Db::Db(Db&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

Db& Db::operator=(Db&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
  }
  return *this;
}

Db::~Db() {
  sqlite3_close_v2(db_);
}

namespace {

// "file:" URI of a path: the characters URIs give meaning to are %-escaped.
std::string file_uri(const std::string& path, const char* query) {
  std::string uri = "file:";
  for (const char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      static constexpr char kHex[] = "0123456789ABCDEF";
      const auto b = static_cast<unsigned char>(c);
      uri += '%';
      uri += kHex[b >> 4];
      uri += kHex[b & 15];
    } else {
      uri += c;
    }
  }
  return uri + query;
}

}  // namespace

StoreResult<Db> Db::open(const std::string& path, const OpenFlags& flags) {
  int mode = flags.read_only || flags.immutable ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  std::string name = path;
  if (flags.immutable) {
    name = file_uri(path, "?immutable=1");
    mode |= SQLITE_OPEN_URI;
  }
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(name.c_str(), &raw, mode | SQLITE_OPEN_NOMUTEX, nullptr);
  Db db(raw);  // closes the handle on every path, including failure
  if (rc != SQLITE_OK) {
    const char* msg = raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    return error_from(rc, msg, "opening " + path);
  }
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, flags.busy_timeout_ms);
  return db;
}

StoreResult<Statement> Db::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) return error_from(sqlite3_extended_errcode(db_), sqlite3_errmsg(db_), "");
  return Statement(db_, stmt);
}

StoreResult<void> Db::exec(const std::string& sql) {
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return error_from(sqlite3_extended_errcode(db_), sqlite3_errmsg(db_), "");
  return {};
}

StoreResult<std::int64_t> Db::query_int(std::string_view sql) {
  STORE_ASSIGN_OR_RETURN(Statement stmt, prepare(sql));
  STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
  if (!row) return make_store_error(StoreErrorCode::kInternal, "query returned no row: " + std::string(sql));
  return stmt.int64(0);
}

std::int64_t Db::last_insert_rowid() const {
  return sqlite3_last_insert_rowid(db_);
}

int Db::changes() const {
  return sqlite3_changes(db_);
}

bool Db::read_only() const {
  return sqlite3_db_readonly(db_, "main") == 1;
}

// Transaction ----------------------------------------------------------------

StoreResult<Transaction> Transaction::begin(Db& db) {
  STORE_TRY(db.exec("BEGIN IMMEDIATE"));
  return Transaction(&db);
}

Transaction::~Transaction() {
  // Errors here cannot be reported; ROLLBACK of a failed COMMIT is harmless.
  if (db_ != nullptr && sqlite3_get_autocommit(db_->handle()) == 0)
    sqlite3_exec(db_->handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

StoreResult<void> Transaction::commit() {
  STORE_TRY(db_->exec("COMMIT"));
  db_ = nullptr;
  return {};
}

}  // namespace hearth::store::sql
