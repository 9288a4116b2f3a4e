#include "conversation/prompt_resolve.h"

namespace hearth::conversation {

store::StoreResult<store::ResolvedPrompt> resolve_version_id(store::Store& store, store::Id version_id) {
  store::ResolvedPrompt out;
  STORE_ASSIGN_OR_RETURN(out.version, store.get_prompt_version(version_id));
  STORE_ASSIGN_OR_RETURN(out.prompt, store.get_prompt(out.version.prompt_id));
  return out;
}

store::StoreResult<void> pin_prompt(store::Store& store, store::Id conversation_id,
                                    const store::ResolvedPrompt& resolved) {
  if (!resolved.label.empty()) return store.pin_prompt_label(conversation_id, resolved.prompt.id, resolved.label);
  return store.set_prompt_version(conversation_id, resolved.version.id);
}

store::StoreResult<std::string> pinned_reference(store::Store& store, store::Id conversation_id) {
  STORE_ASSIGN_OR_RETURN(const store::Conversation c, store.get_conversation(conversation_id));
  if (c.label_prompt_id && !c.prompt_label.empty()) {
    STORE_ASSIGN_OR_RETURN(const store::Prompt p, store.get_prompt(*c.label_prompt_id));
    return p.name + "@" + c.prompt_label;
  }
  if (!c.prompt_version_id) return std::string();
  STORE_ASSIGN_OR_RETURN(const store::ResolvedPrompt r, resolve_version_id(store, *c.prompt_version_id));
  return r.prompt.name + "@" + std::to_string(r.version.version);
}

store::StoreResult<Variables> remembered_variables(store::Store& store, store::Id conversation_id,
                                                   store::Id prompt_id) {
  STORE_ASSIGN_OR_RETURN(const auto path, store.current_path(conversation_id));
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    if (it->role != store::Role::kAssistant) continue;
    STORE_ASSIGN_OR_RETURN(const auto g, store.get_generation(it->id));
    if (!g || !g->prompt_version_id) continue;
    STORE_ASSIGN_OR_RETURN(const auto v, store.get_prompt_version(*g->prompt_version_id));
    if (v.prompt_id == prompt_id) return g->variables;
  }
  return Variables{};
}

store::StoreResult<NeededVariables> variables_needed(store::Store& store, store::Id conversation_id,
                                                     const std::optional<std::string>& prompt, const Variables& given) {
  std::optional<store::ResolvedPrompt> resolved;
  if (prompt) {
    STORE_ASSIGN_OR_RETURN(resolved, store.resolve_prompt(*prompt));
  } else if (conversation_id != 0) {
    STORE_ASSIGN_OR_RETURN(resolved, store.resolve_conversation_prompt(conversation_id));
  }
  NeededVariables out;
  if (!resolved) return out;
  out.prompt = resolved->prompt.name + "@" + std::to_string(resolved->version.version);
  out.names = variables_in(resolved->version.text);
  if (out.names.empty()) return out;
  if (conversation_id != 0) {
    STORE_ASSIGN_OR_RETURN(out.remembered, remembered_variables(store, conversation_id, resolved->prompt.id));
  }
  for (const auto& name : out.names) {
    if (!given.count(name) && !out.remembered.count(name)) out.missing.push_back(name);
  }
  return out;
}

}  // namespace hearth::conversation
