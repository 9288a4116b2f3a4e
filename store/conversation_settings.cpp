// A conversation's own generation settings (schema 3): one row per
// conversation that has them; deleting the conversation deletes the row.
#include <bit>
#include <string>

#include "store/store_impl.h"

namespace hearth::store {

namespace {

std::string settings_label(Id id) {
  return "the settings of conversation " + std::to_string(id);
}

StoreResult<void> check_conversation(sql::Db& db, Id id) {
  STORE_ASSIGN_OR_RETURN(sql::Statement stmt, db.prepare("SELECT 1 FROM conversations WHERE id = ?"));
  stmt.bind(1, id);
  STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
  if (!row) return make_store_error(StoreErrorCode::kNotFound, "no conversation " + std::to_string(id));
  return {};
}

}  // namespace

StoreResult<std::optional<ConversationSettings>> Store::conversation_settings(Id id) {
  return impl_->read("reading " + settings_label(id), [&]() -> StoreResult<std::optional<ConversationSettings>> {
    STORE_TRY(check_conversation(impl_->db, id));
    STORE_ASSIGN_OR_RETURN(
        sql::Statement stmt,
        impl_->db.prepare("SELECT temperature, top_k, top_p, min_p, repeat_penalty, frequency_penalty, "
                          "presence_penalty, penalty_last_n, seed, max_tokens, system_prompt "
                          "FROM conversation_settings WHERE conversation_id = ?"));
    stmt.bind(1, id);
    STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
    if (!row) return std::optional<ConversationSettings>{};
    ConversationSettings c;
    SamplingRecord& p = c.sampling;
    p.temperature = stmt.real(0);
    p.top_k = stmt.int64(1);
    p.top_p = stmt.real(2);
    p.min_p = stmt.real(3);
    p.repeat_penalty = stmt.real(4);
    p.frequency_penalty = stmt.real(5);
    p.presence_penalty = stmt.real(6);
    p.penalty_last_n = stmt.int64(7);
    p.seed = std::bit_cast<std::uint64_t>(stmt.int64(8));
    c.max_tokens = stmt.int64(9);
    c.system_prompt = stmt.text(10);
    return std::optional<ConversationSettings>(std::move(c));
  });
}

StoreResult<void> Store::set_conversation_settings(Id id, const std::optional<ConversationSettings>& settings) {
  return impl_->write("saving " + settings_label(id), [&]() -> StoreResult<void> {
    STORE_TRY(check_conversation(impl_->db, id));
    if (!settings) {
      STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                             impl_->db.prepare("DELETE FROM conversation_settings WHERE conversation_id = ?"));
      stmt.bind(1, id);
      return stmt.run();
    }
    STORE_ASSIGN_OR_RETURN(
        sql::Statement stmt,
        impl_->db.prepare("INSERT OR REPLACE INTO conversation_settings (conversation_id, temperature, top_k, top_p, "
                          "min_p, repeat_penalty, frequency_penalty, presence_penalty, penalty_last_n, seed, "
                          "max_tokens, system_prompt, updated_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    const SamplingRecord& p = settings->sampling;
    stmt.bind(1, id).bind(2, p.temperature).bind(3, p.top_k).bind(4, p.top_p).bind(5, p.min_p);
    stmt.bind(6, p.repeat_penalty).bind(7, p.frequency_penalty).bind(8, p.presence_penalty);
    stmt.bind(9, p.penalty_last_n).bind(10, std::bit_cast<std::int64_t>(p.seed));  // signed 64-bit in SQLite
    stmt.bind(11, settings->max_tokens).bind(12, settings->system_prompt).bind(13, impl_->now());
    return stmt.run();
  });
}

}  // namespace hearth::store
