// Finding prompt versions in the store: by name and number or label, by the
// conversation's pin, by id; and the sampling configuration a version carries.
// The one place conversation/ reads the prompt library.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "conversation/prompt_text.h"
#include "hearth/sampling.h"
#include "store/store.h"

namespace hearth::conversation {

// The sampling configuration saved with a version: only what it sets.
struct VersionConfig {
  std::optional<float> temperature;
  std::optional<std::int32_t> top_k;
  std::optional<float> top_p;
  std::optional<float> min_p;
  std::optional<std::int32_t> max_tokens;
  std::optional<std::vector<std::string>> stop;
};

struct ResolvedVersion {
  store::PromptVersion version;
  std::string name;   // the prompt's
  std::string label;  // the label it was found through; "" when by number or id
  VersionConfig config;
};

// kNotFound naming the prompt, version or label that does not exist.
store::StoreResult<ResolvedVersion> resolve_prompt(store::Store& store, const PromptRef& ref);
store::StoreResult<ResolvedVersion> resolve_version_id(store::Store& store, store::Id version_id);
// What the conversation pins (a label resolved now); nullopt when nothing.
store::StoreResult<std::optional<ResolvedVersion>> resolve_pinned(store::Store& store, const store::Conversation& c);
// Pins what `resolved` was found through (its label, else its version) to the conversation.
store::StoreResult<void> pin_prompt(store::Store& store, store::Id conversation_id, const ResolvedVersion& resolved);

}  // namespace hearth::conversation
