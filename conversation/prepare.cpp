#include "conversation/prepare.h"

#include <algorithm>
#include <climits>
#include <random>
#include <utility>

#include "conversation/prompt_resolve.h"
#include "conversation/sampling_record.h"

namespace hearth::conversation {
namespace {

using store::make_store_error;
using store::StoreErrorCode;
using store::StoreResult;

// What a turn applies, worked out before anything is written.
struct Plan {
  std::optional<store::ResolvedPrompt> resolved;
  std::optional<AppliedPrompt> prompt;
  SamplingParams sampling;
  std::int32_t max_tokens = 0;
  std::vector<std::string> stop;
  std::string system_prompt;  // the plain one, for when no version applies
};

std::int32_t clamp_to_int32(std::int64_t v) {
  return static_cast<std::int32_t>(std::clamp<std::int64_t>(v, INT32_MIN, INT32_MAX));
}

std::uint64_t fresh_seed() {
  std::random_device device;
  const std::uint64_t seed = (static_cast<std::uint64_t>(device()) << 32) ^ device();
  return seed == 0 ? 1 : seed;
}

// settings < the version's configuration < overrides; the seed chosen when 0.
StoreResult<void> apply_sampling(Plan& plan, const TurnSettings& settings) {
  SamplingParams& s = plan.sampling;
  s = settings.sampling;
  plan.max_tokens = settings.max_tokens;
  plan.stop = settings.stop;
  if (plan.resolved) {
    const store::PromptConfig& c = plan.resolved->version.config;
    if (c.temperature) s.temperature = static_cast<float>(*c.temperature);
    if (c.top_k) s.top_k = clamp_to_int32(*c.top_k);
    if (c.top_p) s.top_p = static_cast<float>(*c.top_p);
    if (c.min_p) s.min_p = static_cast<float>(*c.min_p);
    if (c.max_tokens) plan.max_tokens = clamp_to_int32(*c.max_tokens);
    if (c.stop) plan.stop = *c.stop;
  }
  const SamplingOverrides& o = settings.overrides;
  if (o.temperature) s.temperature = *o.temperature;
  if (o.top_k) s.top_k = *o.top_k;
  if (o.top_p) s.top_p = *o.top_p;
  if (o.min_p) s.min_p = *o.min_p;
  if (o.repeat_penalty) s.repeat_penalty = *o.repeat_penalty;
  if (o.seed) s.seed = *o.seed;
  if (o.max_tokens) plan.max_tokens = *o.max_tokens;
  if (o.stop) plan.stop = *o.stop;
  if (auto valid = validate(s); !valid) {
    return make_store_error(StoreErrorCode::kInvalidArgument, "sampling: " + valid.error().message);
  }
  if (plan.max_tokens < 1) {
    return make_store_error(StoreErrorCode::kInvalidArgument,
                            "max tokens must be at least 1 (got " + std::to_string(plan.max_tokens) + ")");
  }
  if (s.seed == 0) s.seed = fresh_seed();  // recorded, so the answer can be reproduced
  return {};
}

// The version's text with the variables filled in: those given, else those
// `remembered`, else (with a conversation) those its last answer with this
// prompt used.
StoreResult<void> render_prompt(store::Store& store, const store::Conversation* conv, Plan& plan,
                                const Variables& given, std::optional<Variables> remembered) {
  if (!plan.resolved) return {};
  const store::ResolvedPrompt& r = *plan.resolved;
  for (const auto& name : variables_in(r.version.text)) {
    if (given.count(name) || (remembered && remembered->count(name))) continue;
    if (!remembered && conv) {
      STORE_ASSIGN_OR_RETURN(remembered, remembered_variables(store, conv->id, r.prompt.id));
    }
    break;
  }
  Variables values = remembered.value_or(Variables{});
  for (const auto& [k, v] : given) values[k] = v;
  const std::string what = "prompt \"" + r.prompt.name + "\" version " + std::to_string(r.version.version);
  STORE_ASSIGN_OR_RETURN(RenderedPrompt rendered, render_variables(r.version.text, values, what));
  plan.prompt = AppliedPrompt{
      r.version.id, r.prompt.name, r.version.version, r.label, std::move(rendered.text), std::move(rendered.used)};
  return {};
}

// The prompt (asked for, by id, or pinned), the sampling and the rendered text.
StoreResult<Plan> plan_turn(store::Store& store, const store::Conversation* conv, const TurnSettings& settings,
                            std::optional<store::Id> version_id = std::nullopt,
                            std::optional<Variables> remembered = std::nullopt) {
  Plan plan;
  if (settings.prompt) {
    STORE_ASSIGN_OR_RETURN(plan.resolved, store.resolve_prompt(*settings.prompt));
  } else if (version_id) {
    STORE_ASSIGN_OR_RETURN(plan.resolved, resolve_version_id(store, *version_id));
  } else if (conv) {
    STORE_ASSIGN_OR_RETURN(plan.resolved, store.resolve_conversation_prompt(conv->id));
  }
  STORE_TRY(render_prompt(store, conv, plan, settings.variables, std::move(remembered)));
  STORE_TRY(apply_sampling(plan, settings));
  plan.system_prompt = settings.system_prompt;
  return plan;
}

bool has_system_message(const std::vector<store::Message>& path) {
  return std::any_of(path.begin(), path.end(), [](const store::Message& m) { return m.role == store::Role::kSystem; });
}

// The applied prompt's text as the one system message, then the path up to
// (not including) the answer. With a prompt applied, system messages stored
// in the tree give way to it; without one they pass through as they are, and
// without those the plain system prompt (if any) goes first. `added`: the
// system text put first ("" for none).
std::vector<ChatTurn> build_messages(const std::vector<store::Message>& path, store::Id answer_id, const Plan& plan,
                                     std::string& added) {
  std::vector<ChatTurn> turns;
  added.clear();
  if (plan.prompt) {
    added = plan.prompt->system_text;
    turns.push_back({"system", added});
  } else if (!plan.system_prompt.empty() && !has_system_message(path)) {
    added = plan.system_prompt;
    turns.push_back({"system", added});
  }
  for (const auto& m : path) {
    if (m.id == answer_id) break;
    if (plan.prompt && m.role == store::Role::kSystem) continue;
    turns.push_back({store::to_string(m.role), m.content});
  }
  return turns;
}

StoreResult<PreparedTurn> prepared(store::Store& store, store::Id conv, store::Id user, store::Id answer, Plan plan) {
  PreparedTurn t;
  t.conversation_id = conv;
  t.user_message_id = user;
  t.answer_id = answer;
  STORE_ASSIGN_OR_RETURN(const auto path, store.current_path(conv));
  t.messages = build_messages(path, answer, plan, t.system_text);
  t.prompt = std::move(plan.prompt);
  t.sampling = plan.sampling;
  t.max_tokens = plan.max_tokens;
  t.stop = std::move(plan.stop);
  return t;
}

}  // namespace

Request PreparedTurn::request() const {
  Request r;
  r.messages = messages;
  r.sampling = sampling;
  r.max_tokens = max_tokens;
  r.stop_strings = stop;
  return r;
}

StoreResult<PreparedTurn> begin_send(store::Store& store, const SendInput& input, const TurnSettings& settings) {
  if (input.text.empty()) return make_store_error(StoreErrorCode::kInvalidArgument, "the message is empty");
  std::optional<store::Conversation> conv;
  if (input.conversation_id != 0) {
    STORE_ASSIGN_OR_RETURN(conv, store.get_conversation(input.conversation_id));
  }
  STORE_ASSIGN_OR_RETURN(Plan plan, plan_turn(store, conv ? &*conv : nullptr, settings));
  store::Id id = input.conversation_id;
  if (!conv) {
    STORE_ASSIGN_OR_RETURN(id, store.create_conversation(title_from_message(input.text)));
  }
  std::optional<store::Id> parent = input.parent;
  if (!parent && input.use_current_leaf && conv) parent = conv->current_leaf_id;
  STORE_ASSIGN_OR_RETURN(const store::Id user, store.add_message({id, parent, store::Role::kUser, input.text}));
  if (input.pin_prompt && settings.prompt && plan.resolved) STORE_TRY(pin_prompt(store, id, *plan.resolved));
  STORE_ASSIGN_OR_RETURN(const store::Id answer, store.begin_answer(id, user));
  return prepared(store, id, user, answer, std::move(plan));
}

StoreResult<PreparedTurn> begin_regenerate(store::Store& store, store::Id message_id, const TurnSettings& settings) {
  STORE_ASSIGN_OR_RETURN(const store::Message m, store.get_message(message_id));
  STORE_ASSIGN_OR_RETURN(const store::Conversation conv, store.get_conversation(m.conversation_id));
  STORE_ASSIGN_OR_RETURN(Plan plan, plan_turn(store, &conv, settings));
  const bool answer = m.role == store::Role::kAssistant;
  store::Id answer_id = 0;
  if (answer) {
    STORE_ASSIGN_OR_RETURN(answer_id, store.regenerate(message_id));
  } else {
    STORE_ASSIGN_OR_RETURN(answer_id, store.begin_answer(conv.id, message_id));
  }
  const store::Id user = answer ? m.parent_id.value_or(0) : message_id;
  return prepared(store, conv.id, user, answer_id, std::move(plan));
}

StoreResult<PreparedTurn> begin_edit(store::Store& store, store::Id message_id, const std::string& text,
                                     const TurnSettings& settings) {
  if (text.empty()) return make_store_error(StoreErrorCode::kInvalidArgument, "the message is empty");
  STORE_ASSIGN_OR_RETURN(const store::Message m, store.get_message(message_id));
  STORE_ASSIGN_OR_RETURN(const store::Conversation conv, store.get_conversation(m.conversation_id));
  STORE_ASSIGN_OR_RETURN(Plan plan, plan_turn(store, &conv, settings));
  STORE_ASSIGN_OR_RETURN(const store::Id user, store.edit_message(message_id, text));
  STORE_ASSIGN_OR_RETURN(const store::Id answer, store.begin_answer(conv.id, user));
  return prepared(store, conv.id, user, answer, std::move(plan));
}

StoreResult<PreparedTurn> begin_rerun(store::Store& store, store::Id user_message_id, TurnSettings settings,
                                      store::Id* previous) {
  STORE_ASSIGN_OR_RETURN(const store::Message m, store.get_message(user_message_id));
  if (m.role != store::Role::kUser) {
    return make_store_error(StoreErrorCode::kInvalidArgument,
                            "message " + std::to_string(user_message_id) + " is not a user message (it is " +
                                store::to_string(m.role) + "'s): re-run the prompt that it answers");
  }
  STORE_ASSIGN_OR_RETURN(const store::Conversation conv, store.get_conversation(m.conversation_id));
  // The branch through the message, to find its newest answer (the new one
  // becomes the current leaf in any case).
  STORE_TRY(store.switch_branch(user_message_id));
  STORE_ASSIGN_OR_RETURN(const auto path, store.current_path(conv.id));
  std::optional<store::GenerationRecord> before;
  store::Id before_id = 0;
  for (std::size_t i = 0; i + 1 < path.size(); ++i) {
    if (path[i].id != user_message_id) continue;
    before_id = path[i + 1].id;
    STORE_ASSIGN_OR_RETURN(before, store.get_generation(before_id));
  }
  if (previous) *previous = before_id;
  std::optional<store::Id> version_id;
  std::optional<Variables> remembered;
  if (before) {
    settings.sampling = sampling_of(before->sampling);
    if (before->max_tokens > 0) settings.max_tokens = clamp_to_int32(before->max_tokens);
    settings.stop = before->stop;
    version_id = before->prompt_version_id;
    remembered = before->variables;
    if (!version_id) settings.system_prompt = before->system_text;  // the plain one it used, if any
  }
  auto plan = plan_turn(store, &conv, settings, version_id, std::move(remembered));
  if (!plan) {
    if (conv.current_leaf_id) STORE_TRY(store.switch_branch(*conv.current_leaf_id));  // as it was
    return std::move(plan).error();
  }
  STORE_ASSIGN_OR_RETURN(const store::Id answer, store.begin_answer(conv.id, user_message_id));
  return prepared(store, conv.id, user_message_id, answer, std::move(plan).value());
}

}  // namespace hearth::conversation
