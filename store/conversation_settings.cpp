// A conversation's own generation settings (schema 3): one row per
// conversation that has them; deleting the conversation deletes the row.
#include <string>

#include "store/store_impl.h"

namespace hearth::store {

namespace {

std::string settings_label(Id id) {
  return "the settings of conversation " + std::to_string(id);
}

}  // namespace

StoreResult<std::optional<ConversationSettings>> Store::conversation_settings(Id id) {
  return impl_->read("reading " + settings_label(id), [&]() -> StoreResult<std::optional<ConversationSettings>> {
    STORE_TRY(require_conversation(impl_->db, id));
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                           impl_->db.prepare("SELECT " + std::string(kConversationSettingsColumns) +
                                             " FROM conversation_settings WHERE conversation_id = ?"));
    stmt.bind(1, id);
    STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
    if (!row) return std::optional<ConversationSettings>{};
    return std::optional<ConversationSettings>(read_conversation_settings(stmt));
  });
}

StoreResult<void> Store::set_conversation_settings(Id id, const std::optional<ConversationSettings>& settings) {
  return impl_->write("saving " + settings_label(id), [&]() -> StoreResult<void> {
    STORE_TRY(require_conversation(impl_->db, id));
    if (!settings) {
      STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                             impl_->db.prepare("DELETE FROM conversation_settings WHERE conversation_id = ?"));
      stmt.bind(1, id);
      return stmt.run();
    }
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                           impl_->db.prepare("INSERT OR REPLACE INTO conversation_settings (conversation_id, " +
                                             std::string(kConversationSettingsColumns) +
                                             ", updated_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    stmt.bind(1, id);
    bind_conversation_settings(stmt, 2, *settings);
    stmt.bind(13, impl_->now());
    return stmt.run();
  });
}

}  // namespace hearth::store
