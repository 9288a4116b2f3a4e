#include <bit>
#include <string>

#include "store/json_text.h"
#include "store/store_impl.h"

namespace hearth::store {

namespace {

Role role_from(const std::string& s) {
  if (s == "system") return Role::kSystem;
  if (s == "assistant") return Role::kAssistant;
  return Role::kUser;  // the schema's CHECK admits nothing else
}

MessageState state_from(const std::string& s) {
  if (s == "streaming") return MessageState::kStreaming;
  if (s == "interrupted") return MessageState::kInterrupted;
  return MessageState::kComplete;
}

}  // namespace

const char* to_string(Role role) {
  switch (role) {
    case Role::kSystem:
      return "system";
    case Role::kUser:
      return "user";
    case Role::kAssistant:
      return "assistant";
  }
  return "user";
}

const char* to_string(MessageState state) {
  switch (state) {
    case MessageState::kComplete:
      return "complete";
    case MessageState::kStreaming:
      return "streaming";
    case MessageState::kInterrupted:
      return "interrupted";
  }
  return "complete";
}

const char* to_string(Rating rating) {
  switch (rating) {
    case Rating::kUp:
      return "up";
    case Rating::kDown:
      return "down";
    case Rating::kNone:
      return "none";
  }
  return "none";
}

Message read_message(const sql::Statement& row) {
  Message m;
  m.id = row.int64(0);
  m.conversation_id = row.int64(1);
  m.parent_id = row.optional_int64(2);
  m.role = role_from(row.text(3));
  m.content = row.text(4);
  m.state = state_from(row.text(5));
  m.created_ms = row.int64(6);
  m.updated_ms = row.int64(7);
  return m;
}

Conversation read_conversation(const sql::Statement& row) {
  Conversation c;
  c.id = row.int64(0);
  c.title = row.text(1);
  c.created_ms = row.int64(2);
  c.updated_ms = row.int64(3);
  c.archived = row.int64(4) != 0;
  c.deleted_ms = row.optional_int64(5);
  c.current_leaf_id = row.optional_int64(6);
  c.prompt_version_id = row.optional_int64(7);
  c.label_prompt_id = row.optional_int64(8);
  c.prompt_label = row.text(9);
  return c;
}

ConversationSettings read_conversation_settings(const sql::Statement& row) {
  ConversationSettings c;
  SamplingRecord& p = c.sampling;
  p.temperature = row.real(0);
  p.top_k = row.int64(1);
  p.top_p = row.real(2);
  p.min_p = row.real(3);
  p.repeat_penalty = row.real(4);
  p.frequency_penalty = row.real(5);
  p.presence_penalty = row.real(6);
  p.penalty_last_n = row.int64(7);
  p.seed = std::bit_cast<std::uint64_t>(row.int64(8));  // the unsigned value's bits
  c.max_tokens = row.int64(9);
  c.system_prompt = row.text(10);
  return c;
}

void bind_conversation_settings(sql::Statement& stmt, int first, const ConversationSettings& c) {
  const SamplingRecord& p = c.sampling;
  stmt.bind(first, p.temperature).bind(first + 1, p.top_k).bind(first + 2, p.top_p).bind(first + 3, p.min_p);
  stmt.bind(first + 4, p.repeat_penalty).bind(first + 5, p.frequency_penalty).bind(first + 6, p.presence_penalty);
  stmt.bind(first + 7, p.penalty_last_n).bind(first + 8, std::bit_cast<std::int64_t>(p.seed));  // signed in SQLite
  stmt.bind(first + 9, c.max_tokens).bind(first + 10, std::string_view(c.system_prompt));
}

Prompt read_prompt(const sql::Statement& row) {
  Prompt p;
  p.id = row.int64(0);
  p.name = row.text(1);
  p.created_ms = row.int64(2);
  p.archived = row.int64(3) != 0;
  p.latest_version = static_cast<int>(row.int64(4));
  return p;
}

PromptVersion read_prompt_version(const sql::Statement& row) {
  PromptVersion v;
  v.id = row.int64(0);
  v.prompt_id = row.int64(1);
  v.version = static_cast<int>(row.int64(2));
  v.text = row.text(3);
  v.note = row.text(4);
  v.created_ms = row.int64(5);
  auto real = [&](int c) { return row.is_null(c) ? std::nullopt : std::optional<double>(row.real(c)); };
  v.config.temperature = real(6);
  v.config.top_p = real(7);
  v.config.top_k = row.optional_int64(8);
  v.config.min_p = real(9);
  v.config.max_tokens = row.optional_int64(10);
  if (!row.is_null(11)) v.config.stop = strings_from_json(row.text(11));
  v.source_version_id = row.optional_int64(12);
  return v;
}

StoreResult<Message> load_message(sql::Db& db, Id id) {
  STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                         db.prepare("SELECT " + std::string(kMessageColumns) + " FROM messages WHERE id = ?"));
  stmt.bind(1, id);
  STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
  if (!row) return make_store_error(StoreErrorCode::kNotFound, "no message with id " + std::to_string(id));
  return read_message(stmt);
}

StoreResult<void> require_conversation(sql::Db& db, Id id) {
  STORE_ASSIGN_OR_RETURN(sql::Statement stmt, db.prepare("SELECT 1 FROM conversations WHERE id = ?"));
  stmt.bind(1, id);
  STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
  if (!row) return make_store_error(StoreErrorCode::kNotFound, "no conversation with id " + std::to_string(id));
  return {};
}

StoreResult<void> set_leaf(sql::Db& db, Id conversation_id, Id leaf_id, TimeMs now) {
  STORE_ASSIGN_OR_RETURN(
      sql::Statement stmt,
      db.prepare("UPDATE conversations SET current_leaf_id = ?, updated_ms = max(updated_ms, ?) WHERE id = ?"));
  stmt.bind(1, leaf_id).bind(2, now).bind(3, conversation_id);
  return stmt.run();
}

}  // namespace hearth::store
