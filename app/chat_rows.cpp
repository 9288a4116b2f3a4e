#include "app/chat_rows.h"

namespace hearth::app {

store::StoreResult<ConversationPath> load_path(store::Store& store, store::Id conversation_id) {
  ConversationPath path;
  path.conversation_id = conversation_id;
  STORE_ASSIGN_OR_RETURN(auto messages, store.current_path(conversation_id));
  for (auto& message : messages) {
    ChatRow row;
    STORE_ASSIGN_OR_RETURN(auto siblings, store.siblings(message.id));
    row.sibling_index = static_cast<int>(siblings.index);
    row.sibling_count = static_cast<int>(siblings.ids.size());
    row.sibling_ids = std::move(siblings.ids);
    if (message.role == store::Role::kAssistant) {
      STORE_ASSIGN_OR_RETURN(row.generation, store.get_generation(message.id));
      STORE_ASSIGN_OR_RETURN(row.rating, store.get_rating(message.id));
    }
    row.message = std::move(message);
    path.rows.push_back(std::move(row));
  }
  return path;
}

}  // namespace hearth::app
