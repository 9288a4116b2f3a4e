#include "conversation/prompt_resolve.h"

namespace hearth::conversation {
namespace {

using store::make_store_error;
using store::StoreErrorCode;

store::StoreResult<store::Prompt> find_prompt(store::Store& store, const std::string& name) {
  STORE_ASSIGN_OR_RETURN(const auto prompts, store.list_prompts());
  for (const auto& p : prompts) {
    if (p.name == name) return p;
  }
  return make_store_error(StoreErrorCode::kNotFound, "no prompt named '" + name + "'");
}

store::StoreResult<std::string> prompt_name(store::Store& store, store::Id prompt_id) {
  STORE_ASSIGN_OR_RETURN(const auto prompts, store.list_prompts());
  for (const auto& p : prompts) {
    if (p.id == prompt_id) return p.name;
  }
  return make_store_error(StoreErrorCode::kNotFound, "no prompt with id " + std::to_string(prompt_id));
}

}  // namespace

store::StoreResult<ResolvedVersion> resolve_prompt(store::Store& store, const PromptRef& ref) {
  STORE_ASSIGN_OR_RETURN(const store::Prompt prompt, find_prompt(store, ref.name));
  STORE_ASSIGN_OR_RETURN(auto versions, store.list_prompt_versions(prompt.id));
  ResolvedVersion out;
  out.name = prompt.name;
  if (ref.version) {
    for (auto& v : versions) {
      if (v.version == *ref.version) {
        out.version = std::move(v);
        return out;
      }
    }
    return make_store_error(StoreErrorCode::kNotFound, "prompt '" + ref.name + "' has no version " +
                                                           std::to_string(*ref.version) + " (it has " +
                                                           std::to_string(versions.size()) + ")");
  }
  if (ref.label == "latest" && !versions.empty()) {
    out.version = std::move(versions.back());
    out.label = "latest";
    return out;
  }
  return make_store_error(StoreErrorCode::kNotFound, "prompt '" + ref.name + "' has no label '" + ref.label + "'");
}

store::StoreResult<ResolvedVersion> resolve_version_id(store::Store& store, store::Id version_id) {
  ResolvedVersion out;
  STORE_ASSIGN_OR_RETURN(out.version, store.get_prompt_version(version_id));
  STORE_ASSIGN_OR_RETURN(out.name, prompt_name(store, out.version.prompt_id));
  return out;
}

store::StoreResult<std::optional<ResolvedVersion>> resolve_pinned(store::Store& store, const store::Conversation& c) {
  if (!c.prompt_version_id) return std::optional<ResolvedVersion>();
  STORE_ASSIGN_OR_RETURN(auto resolved, resolve_version_id(store, *c.prompt_version_id));
  return std::optional<ResolvedVersion>(std::move(resolved));
}

store::StoreResult<void> pin_prompt(store::Store& store, store::Id conversation_id, const ResolvedVersion& resolved) {
  return store.set_prompt_version(conversation_id, resolved.version.id);
}

}  // namespace hearth::conversation
