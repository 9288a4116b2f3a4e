// The conversation database for hearth-cli's store commands (prompts, history,
// export, import, and `send`/`rerun`): the --database option, opening with the
// errors a user can act on, and store errors as CLI failures.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/cli_common.h"
#include "store/store.h"

namespace hearth::cli {

struct DatabaseOptions {
  std::string path{};  // empty: the app's database (settings::default_database_path)
  bool json = false;
};

// Adds --database FILE and --json to a command.
void add_database_options(CLI::App* cmd, DatabaseOptions& options);

enum class Access {
  kRead,   // the database must exist (nothing is created just to be read)
  kWrite,  // created when missing (the default folder too); fails when another process holds the writer lock
};

// Opens the database, migrating it like the app does. Fails with a message
// naming the path when its folder is missing, it does not exist (kRead), it is
// read-only or another Hearth is writing it (kWrite).
std::unique_ptr<store::Store> open_database(const DatabaseOptions& options, Access access);

// The path --database names, or the default one.
std::string database_path(const DatabaseOptions& options);

[[noreturn]] void fail(const store::StoreError& error);

template <class T>
T unwrap(store::StoreResult<T> r) {
  if (!r) fail(r.error());
  return std::move(r).value();
}
inline void unwrap(store::StoreResult<void> r) {
  if (!r) fail(r.error());
}

// "2026-12-02T03:10:37.123Z" (UTC) from milliseconds since the epoch.
std::string iso_time(store::TimeMs ms);
// "YYYY-MM-DD", "YYYY-MM-DDTHH:MM[:SS]" (UTC, optional trailing Z) or
// milliseconds since the epoch. A bare date is the start of that day, or with
// end_of_day the start of the next (so --until 2026-12-01 includes that day).
// Fails naming `option` when the text is none of these.
store::TimeMs parse_time(const std::string& text, bool end_of_day, const std::string& option);

}  // namespace hearth::cli
