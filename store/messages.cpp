// Messages: adding turns, streaming answers incrementally, finishing them.
#include <string>

#include "store/store_impl.h"

namespace hearth::store {

namespace {

std::string message_label(Id id) {
  return "message " + std::to_string(id);
}

// Inserts a message and makes it the conversation's current leaf. The parent,
// when given, must belong to the same conversation.
StoreResult<Id> insert_message(Store::Impl& impl, const NewMessage& m, MessageState state) {
  STORE_TRY(require_conversation(impl.db, m.conversation_id));
  if (m.parent_id) {
    STORE_ASSIGN_OR_RETURN(const Message parent, load_message(impl.db, *m.parent_id));
    if (parent.conversation_id != m.conversation_id) {
      return make_store_error(StoreErrorCode::kInvalidArgument, "parent " + message_label(parent.id) +
                                                                    " belongs to conversation " +
                                                                    std::to_string(parent.conversation_id) + ", not " +
                                                                    std::to_string(m.conversation_id));
    }
  }
  STORE_ASSIGN_OR_RETURN(sql::Statement stmt,
                         impl.db.prepare("INSERT INTO messages (conversation_id, parent_id, role, content, state, "
                                         "created_ms, updated_ms) VALUES (?, ?, ?, ?, ?, ?, ?)"));
  const TimeMs now = impl.now();
  stmt.bind(1, m.conversation_id).bind(2, m.parent_id).bind(3, std::string_view(to_string(m.role)));
  stmt.bind(4, std::string_view(m.content)).bind(5, std::string_view(to_string(state))).bind(6, now).bind(7, now);
  STORE_TRY(stmt.run());
  const Id id = impl.db.last_insert_rowid();
  STORE_TRY(set_leaf(impl.db, m.conversation_id, id, now));
  return id;
}

// Appends to a 'streaming' message; kInvalidArgument when it is not streaming.
StoreResult<void> append_text(Store::Impl& impl, Id id, std::string_view text) {
  STORE_ASSIGN_OR_RETURN(
      sql::Statement stmt,
      impl.db.prepare(
          "UPDATE messages SET content = content || ?, updated_ms = ? WHERE id = ? AND state = 'streaming'"));
  stmt.bind(1, text).bind(2, impl.now()).bind(3, id);
  STORE_TRY(stmt.run());
  if (impl.db.changes() == 1) return {};
  STORE_ASSIGN_OR_RETURN(const Message m, load_message(impl.db, id));
  return make_store_error(StoreErrorCode::kInvalidArgument,
                          message_label(id) + " is " + to_string(m.state) + ", not streaming");
}

}  // namespace

StoreResult<Id> Store::add_message(const NewMessage& message) {
  return impl_->write("saving a message in conversation " + std::to_string(message.conversation_id),
                      [&] { return insert_message(*impl_, message, MessageState::kComplete); });
}

StoreResult<Id> Store::edit_message(Id message_id, std::string_view content) {
  return impl_->write("saving an edit of " + message_label(message_id), [&]() -> StoreResult<Id> {
    STORE_ASSIGN_OR_RETURN(const Message old, load_message(impl_->db, message_id));
    NewMessage edited{old.conversation_id, old.parent_id, old.role, std::string(content)};
    return insert_message(*impl_, edited, MessageState::kComplete);
  });
}

StoreResult<Id> Store::begin_answer(Id conversation_id, std::optional<Id> parent_id) {
  return impl_->write("starting an answer in conversation " + std::to_string(conversation_id), [&] {
    NewMessage answer{conversation_id, parent_id, Role::kAssistant, ""};
    return insert_message(*impl_, answer, MessageState::kStreaming);
  });
}

StoreResult<Id> Store::regenerate(Id assistant_message_id) {
  return impl_->write("starting a new answer beside " + message_label(assistant_message_id), [&]() -> StoreResult<Id> {
    STORE_ASSIGN_OR_RETURN(const Message old, load_message(impl_->db, assistant_message_id));
    if (old.role != Role::kAssistant) {
      return make_store_error(StoreErrorCode::kInvalidArgument,
                              message_label(assistant_message_id) + " is not an assistant message");
    }
    NewMessage answer{old.conversation_id, old.parent_id, Role::kAssistant, ""};
    return insert_message(*impl_, answer, MessageState::kStreaming);
  });
}

StoreResult<void> Store::append_streaming(Id message_id, std::string_view text) {
  return impl_->write("saving " + message_label(message_id), [&] { return append_text(*impl_, message_id, text); });
}

StoreResult<void> Store::finish_message(Id message_id, const FinishMessage& finish) {
  if (finish.state == MessageState::kStreaming) {
    return make_store_error(StoreErrorCode::kInvalidArgument,
                            "finishing " + message_label(message_id) + ": the final state cannot be 'streaming'");
  }
  return impl_->write("finishing " + message_label(message_id), [&]() -> StoreResult<void> {
    STORE_TRY(append_text(*impl_, message_id, finish.tail));
    STORE_ASSIGN_OR_RETURN(sql::Statement stmt, impl_->db.prepare("UPDATE messages SET state = ? WHERE id = ?"));
    stmt.bind(1, std::string_view(to_string(finish.state))).bind(2, message_id);
    STORE_TRY(stmt.run());
    // Activity time only: the user may have moved to another branch meanwhile.
    STORE_ASSIGN_OR_RETURN(sql::Statement touch,
                           impl_->db.prepare("UPDATE conversations SET updated_ms = max(updated_ms, ?) "
                                             "WHERE id = (SELECT conversation_id FROM messages WHERE id = ?)"));
    touch.bind(1, impl_->now()).bind(2, message_id);
    STORE_TRY(touch.run());
    if (finish.generation) {
      GenerationRecord record = *finish.generation;
      record.message_id = message_id;
      STORE_TRY(insert_generation(impl_->db, record));
    }
    return {};
  });
}

StoreResult<Message> Store::get_message(Id id) {
  return impl_->read("reading " + message_label(id), [&] { return load_message(impl_->db, id); });
}

}  // namespace hearth::store
