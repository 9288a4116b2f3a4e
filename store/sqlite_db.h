// A thin RAII layer over the SQLite C API, internal to store/: one connection
// (Db), prepared statements (Statement), and BEGIN IMMEDIATE transactions that
// roll back unless committed. SQLite result codes become StoreErrors here, so
// a full disk or a read-only file reads the same everywhere above.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "store/store_error.h"

struct sqlite3;
struct sqlite3_stmt;

namespace hearth::store::sql {

// Maps an SQLite (extended) result code to a StoreError. `what` names the
// operation ("saving message 12"); the message reads e.g.
// "disk full while saving message 12", the detail "database or disk is full".
StoreError error_from(int rc, std::string_view sqlite_message, std::string_view what);

// Adds the operation to an error raised below it, once: "... while <what>".
StoreError with_context(StoreError error, std::string_view what);

class Statement {
 public:
  Statement() = default;
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Parameters are 1-based, as in SQLite.
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, std::optional<std::int64_t> value);  // nullopt binds NULL
  Statement& bind(int index, std::optional<double> value);        // nullopt binds NULL
  Statement& bind_null(int index);

  // True while a row is available; false once the statement is done.
  StoreResult<bool> step();
  // Steps to the end, ignoring rows.
  StoreResult<void> run();
  // Makes the statement ready to run again (bindings are kept until rebound).
  void reset();

  // Columns are 0-based. text() of NULL is "".
  std::int64_t int64(int column) const;
  double real(int column) const;
  std::string text(int column) const;
  bool is_null(int column) const;
  std::optional<std::int64_t> optional_int64(int column) const;

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

struct OpenFlags {
  bool read_only = false;
  // Read-only, and trusts that nothing changes the file meanwhile (SQLite's
  // immutable=1): the way to read a WAL database in a write-protected folder,
  // where SQLite cannot create its shared-memory file.
  bool immutable = false;
  int busy_timeout_ms = 5000;
};

class Db {
 public:
  Db() = default;
  Db(Db&& other) noexcept;
  Db& operator=(Db&& other) noexcept;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db();

  // Creates the file when missing (unless read_only). Extended result codes on.
  static StoreResult<Db> open(const std::string& path, const OpenFlags& flags);

  StoreResult<Statement> prepare(std::string_view sql);
  // Runs one or more statements without parameters.
  StoreResult<void> exec(const std::string& sql);
  // The first column of the first row of a parameterless query.
  StoreResult<std::int64_t> query_int(std::string_view sql);

  std::int64_t last_insert_rowid() const;
  int changes() const;
  // True when SQLite opened the file read-only (asked for, or write-protected).
  bool read_only() const;
  sqlite3* handle() const { return db_; }

 private:
  explicit Db(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
};

// BEGIN IMMEDIATE (takes the write lock at once, so a busy database fails
// here rather than half-way). Rolls back on destruction unless committed.
class Transaction {
 public:
  static StoreResult<Transaction> begin(Db& db);
  Transaction(Transaction&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  StoreResult<void> commit();

 private:
  explicit Transaction(Db* db) : db_(db) {}
  Db* db_ = nullptr;
};

}  // namespace hearth::store::sql
