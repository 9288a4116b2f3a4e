// One chat turn's plan, made on the thread that owns the store: which prompt
// version applies (and the system text it rendered), the request the model
// will see, and where the answer goes. The app makes it on its storage thread
// and hands the request to its engine thread; the CLI makes and runs it in
// one go (run_turn.h). Both record the answer with AnswerRecorder (recorder.h).
//
//   settings (the front end's defaults) < the prompt version's configuration < overrides
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "conversation/prompt_text.h"
#include "hearth/engine.h"
#include "store/records.h"

namespace hearth::conversation {

// A streaming answer reaches the store at least this often (and on finish).
inline constexpr int kSaveIntervalMs = 500;

// Values the user set explicitly for one turn; each wins over the prompt
// version's configuration and the front end's defaults.
struct SamplingOverrides {
  std::optional<float> temperature;
  std::optional<std::int32_t> top_k;
  std::optional<float> top_p;
  std::optional<float> min_p;
  std::optional<float> repeat_penalty;
  std::optional<std::uint64_t> seed;
  std::optional<std::int32_t> max_tokens;
  std::optional<std::vector<std::string>> stop;
};

struct TurnSettings {
  SamplingParams sampling{};  // the front end's defaults; seed 0: a fresh seed per answer
  std::int32_t max_tokens = 1024;
  std::vector<std::string> stop{};  // stop strings
  SamplingOverrides overrides{};
  // The prompt to apply, "NAME", "NAME@VERSION" or "NAME@LABEL" (a name
  // alone: its `latest`); nullopt: what the conversation pins (nothing
  // pinned: no system prompt).
  std::optional<std::string> prompt{};
  // Values for the prompt's {{variables}}; a variable not given here takes the
  // value the conversation's last answer with the same prompt recorded.
  Variables variables{};
  // A plain system prompt (a front end's generation settings) for a turn that
  // applies no prompt version and whose path holds no system message of its
  // own; recorded as the generation's system_text. Empty: none.
  std::string system_prompt{};
};

// The prompt version a turn applied.
struct AppliedPrompt {
  store::Id version_id = 0;
  std::string name;
  int version = 0;
  std::string label;        // the label it was resolved through ("" for a version number)
  std::string system_text;  // exactly what the model saw as the system message
  Variables variables;      // the values substituted
};

struct PreparedTurn {
  store::Id conversation_id = 0;
  store::Id user_message_id = 0;  // the prompt this turn answers
  store::Id answer_id = 0;        // the 'streaming' assistant message
  std::optional<AppliedPrompt> prompt;
  // The system message this turn added before the path: the prompt version's
  // text, else TurnSettings::system_prompt when it applied; "" for none.
  std::string system_text;
  std::vector<ChatTurn> messages;  // what the chat template renders: system text, then the path
  SamplingParams sampling;         // as sent, the seed chosen
  std::int32_t max_tokens = 0;
  std::vector<std::string> stop;

  Request request() const;  // the engine's request for it
};

}  // namespace hearth::conversation
