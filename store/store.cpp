#include "store/store.h"

#include <chrono>
#include <filesystem>
#include <string>
#include <utility>

#include "store/schema.h"
#include "store/store_impl.h"

namespace hearth::store {

namespace {

TimeMs system_clock_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// Connection settings that are not stored in the file and so are set on every open.
StoreResult<void> configure(sql::Db& db, const StoreOptions& options) {
  STORE_TRY(db.exec("PRAGMA foreign_keys = ON"));
  if (options.max_page_count > 0) {
    STORE_TRY(db.exec("PRAGMA max_page_count = " + std::to_string(options.max_page_count)));
  }
  if (db.read_only()) return {};
  // WAL: readers never block the writer; FULL: a committed transaction is on
  // disk before COMMIT returns (the cost is one fsync per write, off the UI thread).
  STORE_ASSIGN_OR_RETURN(sql::Statement mode, db.prepare("PRAGMA journal_mode = WAL"));
  STORE_ASSIGN_OR_RETURN(const bool row, mode.step());
  if (!row || mode.text(0) != "wal") {
    return make_store_error(StoreErrorCode::kIo, "cannot switch the database to WAL mode");
  }
  return db.exec("PRAGMA synchronous = FULL");
}

// Answers that were streaming when the process died keep their text and
// become kInterrupted. Returns their ids.
StoreResult<std::vector<Id>> recover_streaming(sql::Db& db) {
  STORE_ASSIGN_OR_RETURN(sql::Transaction tx, sql::Transaction::begin(db));
  std::vector<Id> ids;
  {
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                           db.prepare("SELECT id FROM messages WHERE state = 'streaming' ORDER BY id"));
    for (;;) {
      STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
      if (!row) break;
      ids.push_back(stmt.int64(0));
    }
  }
  STORE_TRY(db.exec("UPDATE messages SET state = 'interrupted' WHERE state = 'streaming'"));
  STORE_TRY(tx.commit());
  return ids;
}

// Opens the connection and reads the schema version. A write-protected WAL
// database in a write-protected folder cannot be read normally (SQLite cannot
// create its -shm file); it is then opened immutable, which is safe only when
// no write-ahead log holds unmerged changes (a clean shutdown leaves none).
StoreResult<std::int64_t> connect(Store::Impl& impl, const StoreOptions& options) {
  const sql::OpenFlags flags{.read_only = options.read_only, .busy_timeout_ms = options.busy_timeout_ms};
  STORE_ASSIGN_OR_RETURN(impl.db, sql::Db::open(options.path, flags));
  auto version = impl.db.query_int("PRAGMA user_version");
  if (version || version.error().code != StoreErrorCode::kIo || !impl.db.read_only()) return version;
  std::error_code ec;
  const auto wal_size = std::filesystem::file_size(options.path + "-wal", ec);
  if (!ec && wal_size > 0) {
    return make_store_error(StoreErrorCode::kIo, "database is read-only and its write-ahead log " + options.path +
                                                     "-wal holds changes that cannot be read without write access");
  }
  STORE_ASSIGN_OR_RETURN(impl.db, sql::Db::open(options.path, {.immutable = true}));
  return impl.db.query_int("PRAGMA user_version");
}

StoreResult<std::unique_ptr<Store::Impl>> open_impl(StoreOptions& options) {
  auto impl = std::make_unique<Store::Impl>();
  impl->clock = options.clock ? std::move(options.clock) : system_clock_ms;
  // Only the lock's holder writes, and so only it may recover: a 'streaming'
  // answer seen while another Store holds the lock is that Store's live answer.
  if (!options.read_only) {
    impl->writer_lock = WriterLock::acquire(options.path);
    if (!impl->writer_lock.held()) {
      options.read_only = true;
      impl->writer_elsewhere = true;
      impl->writer_pid = impl->writer_lock.holder_pid();
    }
  }
  STORE_ASSIGN_OR_RETURN(const std::int64_t version, connect(*impl, options));
  impl->read_only = impl->db.read_only();
  STORE_TRY(configure(impl->db, options));
  if (version != latest_schema_version()) STORE_TRY(migrate(impl->db, latest_schema_version()));
  impl->schema_version = latest_schema_version();
  if (!impl->read_only) {
    STORE_ASSIGN_OR_RETURN(impl->recovered, recover_streaming(impl->db));
  }
  return impl;
}

}  // namespace

StoreResult<std::unique_ptr<Store>> Store::open(StoreOptions options) {
  const std::string what = "opening the database " + options.path;
  auto impl = open_impl(options);
  if (!impl) return sql::with_context(std::move(impl).error(), what);
  return std::unique_ptr<Store>(new Store(std::move(impl).value()));
}

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Store::~Store() = default;

int Store::schema_version() const {
  return impl_->schema_version;
}

bool Store::read_only() const {
  return impl_->read_only;
}

int Store::recovered_messages() const {
  return static_cast<int>(impl_->recovered.size());
}

const std::vector<Id>& Store::recovered_message_ids() const {
  return impl_->recovered;
}

bool Store::writer_elsewhere() const {
  return impl_->writer_elsewhere;
}

std::optional<std::int64_t> Store::writer_pid() const {
  return impl_->writer_pid;
}

}  // namespace hearth::store
