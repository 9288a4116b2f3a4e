// Store's private state and the helpers its .cpp files share (internal to store/).
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/records.h"
#include "store/sqlite_db.h"
#include "store/store.h"
#include "store/writer_lock.h"

namespace hearth::store {

struct Store::Impl {
  sql::Db db;
  std::mutex mutex;  // guards db: every public method holds it
  std::function<TimeMs()> clock;
  int schema_version = 0;
  std::vector<Id> recovered;  // the answers open() found 'streaming', oldest first
  bool read_only = false;
  WriterLock writer_lock;         // held for the Store's lifetime when it writes
  bool writer_elsewhere = false;  // another Store held the lock at open: read-only
  std::optional<std::int64_t> writer_pid;

  TimeMs now() const { return clock(); }

  // Runs `body` (returning StoreResult<...>) in one transaction under the lock;
  // any error rolls everything back and is labelled "... while <what>".
  template <class F>
  auto write(std::string_view what, F&& body) -> decltype(body()) {
    std::lock_guard lock(mutex);
    auto tx = sql::Transaction::begin(db);
    if (!tx) return sql::with_context(std::move(tx).error(), what);
    auto result = body();
    if (!result) return sql::with_context(std::move(result).error(), what);
    auto committed = tx->commit();
    if (!committed) return sql::with_context(std::move(committed).error(), what);
    return result;
  }

  // Runs `body` under the lock (a single SELECT is its own read transaction).
  template <class F>
  auto read(std::string_view what, F&& body) -> decltype(body()) {
    std::lock_guard lock(mutex);
    auto result = body();
    if (!result) return sql::with_context(std::move(result).error(), what);
    return result;
  }
};

// Column lists and row readers shared by the queries (columns in this order).
inline constexpr std::string_view kMessageColumns =
    "id, conversation_id, parent_id, role, content, state, created_ms, updated_ms";
inline constexpr std::string_view kConversationColumns =
    "id, title, created_ms, updated_ms, archived, deleted_ms, current_leaf_id, prompt_version_id, label_prompt_id, "
    "prompt_label";
inline constexpr std::string_view kVersionColumns =
    "id, prompt_id, version, text, note, created_ms, temperature, top_p, top_k, min_p, max_tokens, stop_json, "
    "source_version_id";
inline constexpr std::string_view kPromptColumns =
    "id, name, created_ms, archived, (SELECT coalesce(max(version), 0) FROM prompt_versions v WHERE v.prompt_id = "
    "prompts.id)";

inline constexpr std::string_view kConversationSettingsColumns =
    "temperature, top_k, top_p, min_p, repeat_penalty, frequency_penalty, presence_penalty, penalty_last_n, seed, "
    "max_tokens, system_prompt";

Message read_message(const sql::Statement& row);
ConversationSettings read_conversation_settings(const sql::Statement& row);  // kConversationSettingsColumns
// Binds kConversationSettingsColumns' values to parameters first, first + 1, ...
void bind_conversation_settings(sql::Statement& stmt, int first, const ConversationSettings& c);
Conversation read_conversation(const sql::Statement& row);
PromptVersion read_prompt_version(const sql::Statement& row);  // kVersionColumns
Prompt read_prompt(const sql::Statement& row);                 // kPromptColumns

// Loads one message; kNotFound naming the id when it does not exist.
StoreResult<Message> load_message(sql::Db& db, Id id);
// Loads one prompt / version; kNotFound naming the id.
StoreResult<Prompt> load_prompt(sql::Db& db, Id id);
StoreResult<PromptVersion> load_version(sql::Db& db, Id id);
// Version `version` of a prompt; kNotFound naming the prompt and the number.
StoreResult<PromptVersion> load_version_number(sql::Db& db, const Prompt& prompt, int version);
// The version a label of a prompt points at; kNotFound naming both.
StoreResult<PromptVersion> load_label(sql::Db& db, const Prompt& prompt, std::string_view label);
// kNotFound unless the conversation exists (soft-deleted ones exist).
StoreResult<void> require_conversation(sql::Db& db, Id id);
// The generations table's columns, each prefixed ("g." for a join), in the
// order read_generation reads them from column `first`.
std::string generation_columns(std::string_view prefix);
GenerationRecord read_generation(const sql::Statement& row, int first);
// Inserts a generation row for record.message_id (inside the caller's transaction).
StoreResult<Id> insert_generation(sql::Db& db, const GenerationRecord& record);
// User text as an FTS5 query: every word a quoted prefix term, ANDed ("" when none).
std::string fts_query(std::string_view text);
// Moves the conversation's current leaf and its activity time.
StoreResult<void> set_leaf(sql::Db& db, Id conversation_id, Id leaf_id, TimeMs now);

}  // namespace hearth::store
