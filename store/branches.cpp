// The message tree: the path the chat shows, the versions of a turn, switching.
#include <algorithm>
#include <string>

#include "store/store_impl.h"

namespace hearth::store {

StoreResult<std::vector<Message>> Store::current_path(Id conversation_id) {
  return impl_->read("reading conversation " + std::to_string(conversation_id),
                     [&]() -> StoreResult<std::vector<Message>> {
                       STORE_TRY(require_conversation(impl_->db, conversation_id));
                       // Walk up from the leaf; depth orders the rows leaf first.
                       STORE_ASSIGN_OR_RETURN(
                           sql::Statement stmt,
                           impl_->db.prepare("WITH RECURSIVE up(id, depth) AS ("
                                             " SELECT current_leaf_id, 0 FROM conversations WHERE id = ?1"
                                             " UNION ALL SELECT m.parent_id, up.depth + 1 FROM messages m"
                                             " JOIN up ON m.id = up.id WHERE m.parent_id IS NOT NULL)"
                                             " SELECT m.id, m.conversation_id, m.parent_id, m.role, m.content, m.state,"
                                             " m.created_ms, m.updated_ms FROM up JOIN messages m ON m.id = up.id"
                                             " ORDER BY up.depth DESC"));
                       stmt.bind(1, conversation_id);
                       std::vector<Message> path;
                       for (;;) {
                         STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
                         if (!row) return path;
                         path.push_back(read_message(stmt));
                       }
                     });
}

StoreResult<Siblings> Store::siblings(Id message_id) {
  return impl_->read("reading the versions of message " + std::to_string(message_id), [&]() -> StoreResult<Siblings> {
    STORE_ASSIGN_OR_RETURN(const Message m, load_message(impl_->db, message_id));
    STORE_ASSIGN_OR_RETURN(
        sql::Statement stmt,
        impl_->db.prepare("SELECT id FROM messages WHERE conversation_id = ? AND parent_id IS ? ORDER BY id"));
    stmt.bind(1, m.conversation_id).bind(2, m.parent_id);
    Siblings out;
    for (;;) {
      STORE_ASSIGN_OR_RETURN(const bool row, stmt.step());
      if (!row) break;
      out.ids.push_back(stmt.int64(0));
    }
    out.index = static_cast<std::size_t>(std::find(out.ids.begin(), out.ids.end(), message_id) - out.ids.begin());
    return out;
  });
}

StoreResult<Id> Store::switch_branch(Id message_id) {
  return impl_->write("switching to message " + std::to_string(message_id), [&]() -> StoreResult<Id> {
    STORE_ASSIGN_OR_RETURN(const Message m, load_message(impl_->db, message_id));
    // Follow the newest child down to a leaf.
    STORE_ASSIGN_OR_RETURN(sql::Statement child, impl_->db.prepare("SELECT max(id) FROM messages WHERE parent_id = ?"));
    Id leaf = m.id;
    for (;;) {
      child.reset();
      child.bind(1, leaf);
      STORE_ASSIGN_OR_RETURN(const bool row, child.step());
      const std::optional<Id> next = row ? child.optional_int64(0) : std::nullopt;
      if (!next) break;
      leaf = *next;
    }
    STORE_ASSIGN_OR_RETURN(sql::Statement set,
                           impl_->db.prepare("UPDATE conversations SET current_leaf_id = ? WHERE id = ?"));
    set.bind(1, leaf).bind(2, m.conversation_id);
    STORE_TRY(set.run());
    return leaf;
  });
}

}  // namespace hearth::store
