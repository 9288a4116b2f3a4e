// The database schema, versioned with PRAGMA user_version and changed only by
// forward migrations: step N takes a version N-1 database to version N. A
// released step is never edited; a schema change appends a step (and a fixture
// for it in tests/store/migration_test.cpp).
#pragma once

#include <span>

#include "store/sqlite_db.h"

namespace hearth::store {

struct Migration {
  int to_version;   // this step's result; steps are listed with to_version 1, 2, 3...
  const char* sql;  // statements run inside the step's transaction
};

// The schema this program writes, and the steps that build it.
std::span<const Migration> migrations();
int latest_schema_version();

// Brings the database to `target_version` (at most the last step's), one step
// per transaction, so a failed step leaves the previous version intact.
// kUnsupported when the database is newer than `target_version`.
StoreResult<void> migrate(sql::Db& db, int target_version, std::span<const Migration> steps = migrations());

}  // namespace hearth::store
