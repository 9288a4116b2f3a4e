// Conversation rows: create, list by recency, rename, archive, soft delete.
#include <string>

#include "store/store_impl.h"

namespace hearth::store {

namespace {

std::string conversation_label(Id id) {
  return "conversation " + std::to_string(id);
}

// Runs an UPDATE of one conversation; kNotFound when no row changed.
StoreResult<void> update_one(sql::Db& db, std::string_view sql, Id id,
                             const std::function<void(sql::Statement&)>& bind) {
  STORE_ASSIGN_OR_RETURN(sql::Statement stmt, db.prepare(sql));
  bind(stmt);
  STORE_TRY(stmt.run());
  if (db.changes() == 0) return make_store_error(StoreErrorCode::kNotFound, "no " + conversation_label(id));
  return {};
}

}  // namespace

StoreResult<Id> Store::create_conversation(std::string_view title) {
  return impl_->write("creating a conversation", [&]() -> StoreResult<Id> {
    STORE_ASSIGN_OR_RETURN(
        sql::Statement stmt,
        impl_->db.prepare("INSERT INTO conversations (title, created_ms, updated_ms) VALUES (?, ?, ?)"));
    const TimeMs now = impl_->now();
    stmt.bind(1, title).bind(2, now).bind(3, now);
    STORE_TRY(stmt.run());
    return impl_->db.last_insert_rowid();
  });
}

StoreResult<Conversation> Store::get_conversation(Id id) {
  return impl_->read("reading " + conversation_label(id), [&]() -> StoreResult<Conversation> {
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt, impl_->db.prepare("SELECT " + std::string(kConversationColumns) +
                                                                  " FROM conversations WHERE id = ?"));
    stmt.bind(1, id);
    STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
    if (!row) return make_store_error(StoreErrorCode::kNotFound, "no " + conversation_label(id));
    return read_conversation(stmt);
  });
}

StoreResult<std::vector<Conversation>> Store::list_conversations(const ListOptions& options) {
  std::string sql = "SELECT " + std::string(kConversationColumns) + " FROM conversations WHERE ";
  if (options.only_deleted) {
    sql += "deleted_ms IS NOT NULL ORDER BY deleted_ms DESC, id DESC";
  } else {
    sql += "deleted_ms IS NULL";
    if (!options.include_archived) sql += " AND archived = 0";
    sql += " ORDER BY updated_ms DESC, id DESC";
  }
  return impl_->read("listing conversations", [&]() -> StoreResult<std::vector<Conversation>> {
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt, impl_->db.prepare(sql));
    std::vector<Conversation> out;
    for (;;) {
      STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
      if (!row) return out;
      out.push_back(read_conversation(stmt));
    }
  });
}

StoreResult<void> Store::rename_conversation(Id id, std::string_view title) {
  return impl_->write("renaming " + conversation_label(id), [&] {
    return update_one(impl_->db, "UPDATE conversations SET title = ? WHERE id = ?", id,
                      [&](sql::Statement& s) { s.bind(1, title).bind(2, id); });
  });
}

StoreResult<void> Store::set_archived(Id id, bool archived) {
  return impl_->write("archiving " + conversation_label(id), [&] {
    return update_one(impl_->db, "UPDATE conversations SET archived = ? WHERE id = ?", id,
                      [&](sql::Statement& s) { s.bind(1, std::int64_t{archived ? 1 : 0}).bind(2, id); });
  });
}

StoreResult<void> Store::set_prompt_version(Id id, std::optional<Id> prompt_version_id) {
  return impl_->write("pinning a prompt version to " + conversation_label(id), [&] {
    return update_one(impl_->db,
                      "UPDATE conversations SET prompt_version_id = ?, label_prompt_id = NULL, prompt_label = NULL "
                      "WHERE id = ?",
                      id, [&](sql::Statement& s) { s.bind(1, prompt_version_id).bind(2, id); });
  });
}

StoreResult<void> Store::delete_conversation(Id id) {
  return impl_->write("deleting " + conversation_label(id), [&] {
    return update_one(impl_->db, "UPDATE conversations SET deleted_ms = ? WHERE id = ? AND deleted_ms IS NULL", id,
                      [&](sql::Statement& s) { s.bind(1, impl_->now()).bind(2, id); });
  });
}

StoreResult<void> Store::restore_conversation(Id id) {
  return impl_->write("restoring " + conversation_label(id), [&] {
    return update_one(impl_->db, "UPDATE conversations SET deleted_ms = NULL WHERE id = ? AND deleted_ms IS NOT NULL",
                      id, [&](sql::Statement& s) { s.bind(1, id); });
  });
}

StoreResult<int> Store::purge_deleted() {
  return impl_->write("emptying the trash", [&]() -> StoreResult<int> {
    // Messages, their generations and index entries go by cascade and triggers.
    STORE_TRY(impl_->db.exec("DELETE FROM conversations WHERE deleted_ms IS NOT NULL"));
    return impl_->db.changes();
  });
}

}  // namespace hearth::store
