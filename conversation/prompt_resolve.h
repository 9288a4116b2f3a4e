// The prompt library as a turn needs it (store/ owns it): a version by id
// with its prompt, pinning what a reference resolved through, and the
// variable values a conversation used last with a prompt.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "conversation/prompt_text.h"
#include "store/store.h"

namespace hearth::conversation {

store::StoreResult<store::ResolvedPrompt> resolve_version_id(store::Store& store, store::Id version_id);
// Pins the label `resolved` went through (a name alone: `latest`), else its version.
store::StoreResult<void> pin_prompt(store::Store& store, store::Id conversation_id,
                                    const store::ResolvedPrompt& resolved);
// What the conversation pins, as a reference: "NAME@LABEL", "NAME@3", or "" when nothing.
store::StoreResult<std::string> pinned_reference(store::Store& store, store::Id conversation_id);
// The variables of the newest answer on the conversation's current path that
// used a version of `prompt_id`; none when no answer did.
store::StoreResult<Variables> remembered_variables(store::Store& store, store::Id conversation_id, store::Id prompt_id);

// The {{variables}} a send would fill: those of the prompt it applies
// (`prompt` as TurnSettings::prompt, else what the conversation pins; none:
// no variables), the values the conversation's last answer with that prompt
// used, and the names that neither `given` nor those values cover. A front
// end asks the user for `missing` before begin_send, which refuses them.
struct NeededVariables {
  std::string prompt;              // "NAME@VERSION" of the version it resolves to; "" when none applies
  std::vector<std::string> names;  // every variable of its text, in order of first use
  Variables remembered;            // values to offer
  std::vector<std::string> missing;
};
store::StoreResult<NeededVariables> variables_needed(store::Store& store, store::Id conversation_id,
                                                     const std::optional<std::string>& prompt, const Variables& given);

}  // namespace hearth::conversation
