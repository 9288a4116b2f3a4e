// JSON of store records for hearth-cli's output. Field names are an interface
// (README, "Prompts and history"): add fields, never rename.
#pragma once

#include <nlohmann/json.hpp>

#include "store/store.h"

namespace hearth::cli {

// {"temperature", "top_p", "top_k", "min_p", "max_tokens", "stop"}; null: not set.
nlohmann::json prompt_config_json(const store::PromptConfig& config);
// {"name", "prompt_id", "version", "version_id", "text", "note", "created", "created_ms", "config",
//  "source_version", "labels": [names pointing here]}
nlohmann::json prompt_version_json(const store::Prompt& prompt, const store::PromptVersion& version,
                                   const std::vector<store::PromptLabel>& labels);
// {"answers", "median_ttft_ms", "median_decode_tps", "median_generated_tokens", "finish_reasons", "rated_up",
// "rated_down"}
nlohmann::json metrics_json(const store::VersionMetrics& metrics);
// A generation record: "prompt_version" {"name", "version", "id"} (null when none), "prompt_label",
// "system_text", "variables", "model", "model_path", "model_sha256", "quantization", "kv_precision",
// "device", "sampling" {...}, "max_tokens", "stop", "prompt_tokens", "cached_tokens",
// "generated_tokens", "ttft_ms", "prefill_tps", "decode_tps", "itl_p50_ms", "itl_p95_ms", "itl_p99_ms",
// "peak_memory_bytes", "finish_reason", "error" (finish_reason "error": why; else ""), "started", "finished".
// Looks the version's prompt up in `store`.
nlohmann::json generation_json(store::Store& store, const store::GenerationRecord& generation);
// One history row: "message_id", "conversation_id", "conversation_title", "time", "created_ms", "text",
// "answer_message_id", "rating", and the generation's fields flattened in (null when unanswered).
nlohmann::json history_entry_json(const store::HistoryEntry& entry);

}  // namespace hearth::cli
