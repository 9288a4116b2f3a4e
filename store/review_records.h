// Records of prompt history review (schema 2): the history query and its rows,
// per-version metrics, experiments, import summaries. Plain data, as records.h.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store/records.h"

namespace hearth::store {

// Columns history can be sorted by. Ties always fall back to newest first;
// rows without the value (a prompt without an answer or a generation record)
// come last in either direction.
enum class HistorySort {
  kTime,          // the user message's created time
  kConversation,  // conversation title
  kModel,         // model_name
  kTtft,          // ttft_ms
  kDecodeTps,     // decode_tok_s
  kPromptTokens,
  kGeneratedTokens,
  kFinishReason,
  kRating,
  // Added with the app's history window (sort by any column):
  kText,           // the prompt's text
  kPromptVersion,  // prompt name, then version number
  kQuantization,
  kKvPrecision,
  kDevice,
  kTemperature,  // the sampling's temperature
  kCachedTokens,
};

// The values the history's filters can take, for the app's choosers.
struct HistoryFacets {
  std::vector<std::string> models{};  // model_name, sorted
  std::vector<std::string> quantizations{};
  std::vector<std::string> finish_reasons{};
};

// Every filter is ANDed; an unset one does not filter. Generation filters
// (model, quantization, prompt, finish, rating) only match prompts that have
// an answer with a generation record.
struct HistoryQuery {
  std::string search{};  // FTS5 over the prompt's text: every word, as a prefix; FTS syntax taken literally
  std::optional<Id> conversation_id{};
  std::optional<Id> prompt_id{};          // any version of this prompt
  std::optional<Id> prompt_version_id{};  // exactly this version
  std::string model{};                    // model_name, or model_path when it has a '/' or ends in .gguf; exact
  std::string quantization{};             // exact, e.g. "Q4_1"
  std::string finish_reason{};            // exact: "stop", "length", ...
  std::optional<Rating> rating{};         // kNone: answers nobody rated
  std::optional<TimeMs> since_ms{};       // created at or after
  std::optional<TimeMs> until_ms{};       // created before
  bool include_deleted = false;           // conversations in the trash
  int limit = 100;                        // rows (clamped to 0..10000)
  int offset = 0;
  HistorySort sort = HistorySort::kTime;
  bool descending = true;
};

// One user prompt that was sent, with the newest answer under it.
struct HistoryEntry {
  Id message_id = 0;  // the user message
  Id conversation_id = 0;
  std::string conversation_title{};
  TimeMs created_ms = 0;
  std::string text{};
  std::optional<Id> answer_message_id{};  // the newest assistant reply to it, if any
  std::optional<GenerationRecord> generation{};
  std::string prompt_name{};  // of generation->prompt_version_id; empty when none
  int prompt_version = 0;     // its number; 0 when none
  Rating rating = Rating::kNone;
};

// How one prompt version performs, over the answers recorded with it.
struct VersionMetrics {
  Id version_id = 0;
  std::int64_t answers = 0;
  double median_ttft_ms = 0;  // medians are 0 when there are no answers
  double median_decode_tok_s = 0;
  double median_generated_tokens = 0;                    // answer length in tokens
  std::map<std::string, std::int64_t> finish_reasons{};  // "stop" -> 12, ...
  std::int64_t rated_up = 0;
  std::int64_t rated_down = 0;
};

// A set of past prompts run against two prompt versions.
struct ExperimentResult {
  Id id = 0;
  Id source_message_id = 0;               // the past user prompt
  Id version_id = 0;                      // the prompt version it ran with
  std::optional<Id> answer_message_id{};  // the answer it produced (unset when that failed or was deleted)
};

struct Experiment {
  Id id = 0;
  std::string name{};
  Id version_a_id = 0;
  Id version_b_id = 0;
  TimeMs created_ms = 0;
  std::string settings_json = "{}";         // the run's model / sampling choices, as the caller wrote them
  std::vector<ExperimentResult> results{};  // in the order added
};

struct NewExperiment {
  std::string name{};
  Id version_a_id = 0;
  Id version_b_id = 0;
  std::string settings_json = "{}";
};

struct ExportOptions {
  std::optional<Id> conversation_id{};  // one conversation (with the prompts it uses); unset: everything
};

// What import_json added (ids are this database's).
struct ImportSummary {
  int prompts = 0;
  // Prompts of the document found here already, with the same versions (the
  // same file imported twice): reused, not copied under another name.
  int prompts_reused = 0;
  int prompt_versions = 0;
  int conversations = 0;
  int messages = 0;
  int generations = 0;
  int ratings = 0;
  int experiments = 0;
  bool ids_remapped = false;                             // some ids were taken here, so rows got new ones
  std::map<std::string, std::string> renamed_prompts{};  // imported name -> the name it got (a name already here)
};

}  // namespace hearth::store
