// Plain records the store reads and writes. They mirror no engine type on
// purpose (store/ must not include engine/); the app maps between them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hearth::store {

using Id = std::int64_t;      // a row id; ids grow with creation order
using TimeMs = std::int64_t;  // milliseconds since the Unix epoch, UTC

// Stored as text ('system', 'user', 'assistant'): do not rename.
enum class Role { kSystem, kUser, kAssistant };
// Stored as text ('complete', 'streaming', 'interrupted'): do not rename.
enum class MessageState {
  kComplete,     // finished normally (also after Stop: the text is what the user saw)
  kStreaming,    // an answer being written; never seen after Store::open
  kInterrupted,  // the process died while streaming, or the answer failed part-way (its generation's
                 // finish_reason "error": an engine error, a remote stream cut); the text so far is kept
};

const char* to_string(Role role);
const char* to_string(MessageState state);

struct Conversation {
  Id id = 0;
  std::string title{};
  TimeMs created_ms = 0;
  TimeMs updated_ms = 0;  // last message activity
  bool archived = false;
  std::optional<TimeMs> deleted_ms{};  // set while in the trash (restore_conversation undoes it)
  std::optional<Id> current_leaf_id{};
  std::optional<Id> prompt_version_id{};  // the pinned system prompt version
  // Or a pinned label (schema 2): prompt_label of prompt label_prompt_id,
  // resolved at send time. At most one of the two pins is set.
  std::optional<Id> label_prompt_id{};
  std::string prompt_label{};  // empty: no label pinned
};

struct Message {
  Id id = 0;
  Id conversation_id = 0;
  std::optional<Id> parent_id{};  // nullopt: a root
  Role role = Role::kUser;
  std::string content{};
  MessageState state = MessageState::kComplete;
  TimeMs created_ms = 0;
  TimeMs updated_ms = 0;
};

// The versions of one turn: messages sharing a parent, oldest first.
struct Siblings {
  std::vector<Id> ids{};
  std::size_t index = 0;  // of the message asked about; shown as "index + 1 / ids.size()"
};

struct Prompt {
  Id id = 0;
  std::string name{};  // unique (schema 2)
  TimeMs created_ms = 0;
  bool archived = false;   // hidden from lists; its versions stay and stay referenced
  int latest_version = 0;  // 0: no version yet
};

// The model configuration saved with a prompt version. Each field unset means
// "not set by the prompt": the conversation's or the app's setting applies.
struct PromptConfig {
  std::optional<double> temperature{};
  std::optional<double> top_p{};
  std::optional<std::int64_t> top_k{};
  std::optional<double> min_p{};
  std::optional<std::int64_t> max_tokens{};
  std::optional<std::vector<std::string>> stop{};  // stop strings
  bool operator==(const PromptConfig&) const = default;
};

struct PromptVersion {
  Id id = 0;
  Id prompt_id = 0;
  int version = 0;  // 1, 2, ... within its prompt
  std::string text{};
  std::string note{};
  TimeMs created_ms = 0;
  PromptConfig config{};                  // schema 2; old versions have none set
  std::optional<Id> source_version_id{};  // a revert: the version it copies
};

// What a new version holds (the store numbers and dates it).
struct NewPromptVersion {
  std::string text{};
  std::string note{};
  PromptConfig config{};
};

// The label `latest` is kept on the newest version by the store itself; other
// labels (`production`, ...) are set and moved by the user.
inline constexpr const char* kLatestLabel = "latest";

struct PromptLabel {
  Id prompt_id = 0;
  std::string label{};
  Id version_id = 0;
  int version = 0;  // the version number version_id has
  TimeMs updated_ms = 0;
};

// A prompt reference resolved to one version: "NAME" (its latest), "NAME@3",
// "NAME@production".
struct ResolvedPrompt {
  Prompt prompt{};
  PromptVersion version{};
  std::string label{};  // the label it went through; empty for "NAME@3"
};

// Thumbs on an assistant message. Stored as -1 / 1 (no row: kNone): do not change.
enum class Rating { kNone = 0, kUp = 1, kDown = -1 };
const char* to_string(Rating rating);  // "none", "up", "down"

// Sampling settings as recorded (the engine's SamplingParams, field by field).
struct SamplingRecord {
  double temperature = 0;
  std::int64_t top_k = 0;
  double top_p = 0;
  double min_p = 0;
  double repeat_penalty = 0;
  double frequency_penalty = 0;
  double presence_penalty = 0;
  std::int64_t penalty_last_n = 0;
  std::uint64_t seed = 0;
  bool operator==(const SamplingRecord&) const = default;
};

// A conversation's own generation settings (schema 3), as the user set them
// for it in a front end; a conversation without them uses the front end's
// app-wide defaults (settings.json). Each answer's GenerationRecord keeps what
// it actually used.
struct ConversationSettings {
  SamplingRecord sampling{};    // seed 0: a fresh seed per answer
  std::int64_t max_tokens = 0;  // per answer
  std::string system_prompt{};  // used when no prompt version is pinned; empty: none
  bool operator==(const ConversationSettings&) const = default;
};

// One per assistant message: what produced the answer and how fast.
struct GenerationRecord {
  Id message_id = 0;
  std::optional<Id> prompt_version_id{};
  std::string model_path{};
  std::string model_sha256{};  // hex
  std::string quantization{};  // e.g. "Q4_1"
  std::string kv_precision{};  // "f16", "fp8", "q8_0"
  std::string device{};        // "cpu", "cuda:0", or a remote server's URL
  SamplingRecord sampling{};
  std::int64_t prompt_tokens = 0;
  std::int64_t cached_tokens = 0;  // prompt tokens served by the prefix cache
  std::int64_t generated_tokens = 0;
  double ttft_ms = 0;
  double prefill_tok_s = 0;
  double decode_tok_s = 0;
  double itl_p50_ms = 0;  // inter-token latency percentiles
  double itl_p95_ms = 0;
  std::int64_t peak_memory_bytes = 0;
  std::string finish_reason{};  // the engine's: "stop", "length", "cancelled", "error"
  TimeMs started_ms = 0;
  TimeMs finished_ms = 0;
  // Schema 2 (older rows read as the defaults).
  std::string system_text{};                       // the exact system text sent (a prompt version rendered)
  std::map<std::string, std::string> variables{};  // the {{variables}} filled in it
  std::string prompt_label{};                      // the label resolved to prompt_version_id; empty: none
  double itl_p99_ms = 0;
  std::int64_t max_tokens = 0;      // the request's limit; 0: none recorded
  std::vector<std::string> stop{};  // the request's stop strings
  std::string model_name{};         // shown in history; empty: the model file's name, .gguf dropped
  // Schema 5: finish_reason "error": what failed, as the engine or the remote
  // endpoint said it ("the stream from URL was cut before ..."); "" otherwise.
  std::string error{};
};

// One conversation found by search, with the best-ranked matching text.
struct SearchHit {
  Id conversation_id = 0;
  std::string title{};
  TimeMs updated_ms = 0;
  std::optional<Id> message_id{};  // nullopt when the title matched
  std::string snippet{};           // matched terms wrapped in the marks asked for
};

}  // namespace hearth::store
